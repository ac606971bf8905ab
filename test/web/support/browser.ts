import { mkdirSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { SCREENSHOT_DIR } from './paths.ts';

/** Debian's Chromium (never a downloaded browser); `CHROMIUM` overrides the path. */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Launches headless Chromium; dispose it with `await using`. */
export async function launchBrowser(): Promise<Browser & AsyncDisposable> {
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
    ],
  });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

/** Wide and narrow viewports the screenshots are taken at (the console must be usable at 400 px). */
export const VIEWPORTS = { wide: { width: 1280, height: 800 }, narrow: { width: 400, height: 800 } } as const;

/** A fresh context (own storage) with a page on it, in the wide viewport and light scheme. */
export async function openPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: VIEWPORTS.wide, colorScheme: 'light' });
  const page = await context.newPage();
  page.on('pageerror', (error) => console.error('page error:', error));
  return { context, page };
}

/**
 * Screenshots of the page as it is, in light and dark, wide and narrow, named
 * `<name>-<scheme>-<width>.png` in test/web/screenshots; restores the wide light view after.
 */
export async function screenshotAll(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [width, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      // Let the layout (and the virtual table) settle on the new size.
      await page.evaluate(
        () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
      );
      await page.screenshot({ path: `${SCREENSHOT_DIR}${name}-${scheme}-${width}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(VIEWPORTS.wide);
}
