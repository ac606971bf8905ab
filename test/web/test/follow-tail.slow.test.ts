import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '@mci/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { openPage } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'mci-web-follow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An answer of 150 short paragraphs: several screens tall, streamed over seconds.
const LONG_ANSWER = join(dir, 'long-answer.md');
writeFileSync(
  LONG_ANSWER,
  `## assistant\n\n${Array.from({ length: 150 }, (_, i) => `Paragraph ${i} of a long answer.`).join('\n\n')}\n`,
);

describe('following the newest text', () => {
  it('the chat follows a streaming answer until the reader scrolls up; an opened conversation starts at its end', async () => {
    await using server = await startServer({
      chat: { models: [`replay:${LONG_ANSWER}`], modelOptions: { tokensPerSecond: 150 } },
    });
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    const fromEnd = () =>
      page.evaluate(() => document.documentElement.scrollHeight - window.scrollY - window.innerHeight);
    const answer = () => page.locator('.messages').textContent();
    await page.goto(`${server.url}/chat`);
    await page.getByRole('textbox', { name: 'Message' }).fill('Write a long answer');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(answer, { timeout: 30_000 }).toContain('Paragraph 40 ');
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeGreaterThan(1600);
    await expect.poll(fromEnd).toBeLessThan(30);

    // The reader scrolls up: the page stays where they are while the answer goes on.
    await page.mouse.move(640, 400);
    await page.mouse.wheel(0, -600);
    await expect.poll(fromEnd).toBeGreaterThan(300);
    const readingAt = await page.evaluate(() => window.scrollY);
    const shown = ((await answer()) ?? '').length;
    await expect.poll(async () => ((await answer()) ?? '').length).toBeGreaterThan(shown + 200);
    expect(await page.evaluate(() => window.scrollY)).toBe(readingAt);
    await expect.poll(answer, { timeout: 30_000 }).toContain('Paragraph 149 ');

    // Opened again, the conversation shows its end.
    await page.goto(page.url());
    await expect.poll(answer, { timeout: 20_000 }).toContain('Paragraph 149 ');
    await expect.poll(fromEnd).toBeLessThan(30);
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
  });

  it("a running process's stdout box follows its newest lines until the reader scrolls up", async () => {
    await using server = await startServer();
    await using client = await testClient(server);
    const process = await client.createProcess(
      "for (let i = 0; i < 400; i++) { console.log('line ' + i); await new Promise((resolve) => setTimeout(resolve, 25)); }",
    );
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const box = page.getByRole('region', { name: 'Run 1', exact: true }).getByRole('log', { name: 'stdout' });
    const scroll = () =>
      box.evaluate((element) => ({
        top: element.scrollTop,
        fromEnd: element.scrollHeight - element.scrollTop - element.clientHeight,
        overflow: element.scrollHeight - element.clientHeight,
      }));
    await expect.poll(async () => (await scroll()).overflow, { timeout: 20_000 }).toBeGreaterThan(200);
    await expect.poll(async () => (await scroll()).fromEnd).toBeLessThan(30);

    await box.evaluate((element) => {
      element.scrollTop = 0;
    });
    const lines = ((await box.textContent()) ?? '').length;
    await expect.poll(async () => ((await box.textContent()) ?? '').length).toBeGreaterThan(lines + 100);
    expect((await scroll()).top).toBe(0);
    await client.signal(process.pid, 'kill');
  });
});
