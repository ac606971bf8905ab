import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '@mci/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'mci-web-polish-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A description with markdown, and with HTML and a javascript: link that must not come alive.
const TOOL_FILE = join(dir, 'mci.yaml');
writeFileSync(
  TOOL_FILE,
  `schemaVersion: '1.0'
metadata: { name: polish }
tools:
  - name: lookup
    title: Look up a word
    description: |
      Finds **one word** in the \`dictionary\`:

      - exact matches first
      - then [close ones](https://example.com/close)

      <img src="x" onerror="window.hacked = true"> [click](javascript:window.hacked=true)
    inputSchema: { type: object, properties: { word: { type: string } } }
    execution: { type: text, text: "{{props.word}}" }
`,
);

// Characters that a browser draws from an emoji font when it has one (and as a box when not).
const EMOJI = /\p{Emoji_Presentation}/u;

describe('console polish', () => {
  it("a tool card shows the tool's title and its description as markdown, with no HTML or script links alive", async () => {
    await using server = await startServer({ file: TOOL_FILE });
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/tools`);
    const card = page.getByRole('article', { name: 'lookup' });
    await card.getByRole('heading', { name: 'lookup Look up a word' }).waitFor();
    await card.getByRole('listitem').filter({ hasText: 'exact matches first' }).waitFor();
    expect(await card.locator('strong').textContent()).toBe('one word');
    expect(await card.locator('code', { hasText: 'dictionary' }).count()).toBe(1);
    const link = card.getByRole('link', { name: 'close ones' });
    expect(await link.getAttribute('href')).toBe('https://example.com/close');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await card.locator('img').count()).toBe(0);
    const script = card.getByRole('link', { name: 'click' });
    expect(await script.getAttribute('href')).not.toMatch(/javascript/i);
    await script.click();
    expect(await page.evaluate(() => (window as unknown as { hacked?: boolean }).hacked)).toBeUndefined();
    await screenshotAll(page, 'tools-markdown');
  });

  it('state badges are text and drawn icons: the timeout badge needs no emoji font', async () => {
    await using server = await startServer();
    await using client = await testClient(server);
    const process = await client.createProcess('while (true) {}', { timeoutMs: 200 });
    expect((await client.wait(process.pid, { timeoutMs: 20_000 })).status).toBe('timeout');
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const badge = page.locator('main [data-state="timeout"]').first();
    await badge.waitFor();
    expect(await badge.textContent()).toBe('timeout');
    expect(await badge.locator('svg').count()).toBe(1);
    const badges = await page.locator('[data-state]').allTextContents();
    expect(badges.filter((text) => EMOJI.test(text))).toEqual([]);
    await screenshotAll(page, 'process-timeout');
  });
});
