import type { Locator, Page } from 'playwright-core';

/** The process table's row of process `pid` (found by its link, named `Process <pid>`). */
export function processRow(page: Page, pid: number): Locator {
  return page
    .getByRole('table', { name: 'Processes' })
    .getByRole('row')
    .filter({ has: page.getByRole('link', { name: `Process ${pid}`, exact: true }) });
}

/** The text of the Processes page's count (`N of M processes`). */
export function processCount(page: Page): Promise<string | null> {
  return page.getByRole('status', { name: 'Process count' }).textContent();
}
