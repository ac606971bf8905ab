import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

// An output as large as a run may write (limits.maxOutputBytes, 1 MiB): an array of small records
// grown until its JSON text is within 8 KiB of the limit.
const BIG_OUTPUT = `
const items: object[] = [];
let bytes = 2;
for (let i = 0; bytes < 1024 * 1024 - 8 * 1024; i++) {
  const item = { id: i, name: 'item ' + i, tags: ['red', 'green'], size: { width: i % 640, height: i % 480 } };
  bytes += JSON.stringify(item).length + 1;
  items.push(item);
}
output(items);
`;

describe('a big output', () => {
  it('the 1 MiB maximum output is drawn two levels deep, its long array a page at a time', async () => {
    await using server = await startServer();
    await using client = await testClient(server);
    const process = await client.createProcess(BIG_OUTPUT);
    expect((await client.wait(process.pid, { timeoutMs: 30_000 })).status).toBe('success');
    const [items] = (await client.getResult(process.pid)).outputs as [unknown[]];
    expect(JSON.stringify(items).length).toBeGreaterThan(1000 * 1024);
    const count = items.length.toLocaleString('en');

    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const output = page.getByTitle('Output 1', { exact: true });
    await expect
      .poll(() => output.textContent(), { timeout: 20_000 })
      .toContain(`${count} items, the first 100 shown`);
    const nodes = () => page.evaluate(() => document.getElementsByTagName('*').length);
    // Every record of the first page is open, its `tags` and `size` closed.
    const text = (await output.textContent()) ?? '';
    expect(text).toContain('"item 99"');
    expect(text).not.toContain('"item 100"');
    expect(text).not.toContain('"green"');
    const first = await nodes();
    expect(first).toBeLessThan(10_000);
    const more = output.getByRole('button', { name: 'Show 100 more items of Output 1' });
    await more.scrollIntoViewIfNeeded();
    await screenshotAll(page, 'process-big-output');

    await more.click();
    await expect.poll(() => output.textContent()).toContain(`${count} items, the first 200 shown`);
    expect(await output.textContent()).toContain('"item 199"');
    expect(await nodes()).toBeLessThan(2 * first);
  });
});
