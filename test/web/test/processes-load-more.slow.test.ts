import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { processCount, processRow } from '../support/page-helpers.ts';
import { startServer, testClient } from '../support/start-server.ts';

describe('Processes page paging', () => {
  it('shows the newest 100 processes first and loads older ones a page at a time', async () => {
    await using server = await startServer({ limits: { rateLimitPerSecond: 10_000 } });
    await using client = await testClient(server);
    const created: number[] = [];
    for (let i = 0; i < 150; i++)
      created.push((await client.createProcess(`output(${i})`, { autorun: false })).pid);
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes`);
    await expect.poll(() => processCount(page)).toBe('100 of 100 processes');
    const loadMore = page.getByRole('button', { name: 'Load older processes' });
    await expect.poll(() => loadMore.count()).toBe(1);
    await screenshotAll(page, 'processes-load-more');

    // A process created now comes in live on top; the older page follows on the button.
    const live = await client.createProcess('output("live")', { autorun: false });
    await expect.poll(() => processCount(page)).toBe('101 of 101 processes');
    await loadMore.click();
    await expect.poll(() => processCount(page)).toBe('151 of 151 processes');
    await expect.poll(() => loadMore.count()).toBe(0);
    // The oldest process is in the table: scroll to the end of the virtual list.
    await page
      .getByRole('table', { name: 'Processes' })
      .locator('tbody')
      .evaluate((body) => {
        body.scrollTop = body.scrollHeight;
      });
    await expect.poll(() => processRow(page, created[0]!).count()).toBe(1);
    expect(live.pid).toBeGreaterThan(Math.max(...created));
  });
});
