import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser); `CHROMIUM` overrides the path. */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * Launches headless Debian Chromium with `extraArgs` after the standard flags; dispose it with
 * `await using`. Throws when the browser is not installed.
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser & AsyncDisposable> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  // Loaded here, so the suites that import @mci/test-support without a browser do not load Playwright.
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}
