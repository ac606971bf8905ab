import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { openConsole } from '../support/open-console.ts';
import { processCount, processRow } from '../support/page-helpers.ts';
import { startServer, testClient } from '../support/start-server.ts';

describe('Processes page', () => {
  it('updates live while another client creates 200 processes, and its filters narrow the table', async () => {
    // The other client creates its 200 at once: past the default request budget of one principal.
    await using server = await startServer({ limits: { rateLimitPerSecond: 10_000 } });
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes`);
    await expect.poll(() => processCount(page)).toBe('0 of 0 processes');

    await using client = await testClient(server);
    // Every 20th program fails on its second line; refs alternate between even and odd.
    const created = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        client.createProcess(
          i % 20 === 0 ? `const n = ${i};\nthrow new Error('boom ' + n);` : `output(${i});`,
          {
            ref: i % 2 === 0 ? 'even' : 'odd',
          },
        ),
      ),
    );
    await expect.poll(() => processCount(page), { timeout: 30_000 }).toBe('200 of 200 processes');
    await Promise.all(created.map((process) => client.wait(process.pid)));
    const newest = Math.max(...created.map((process) => process.pid));
    await expect.poll(() => processRow(page, newest).textContent()).toContain('success');

    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await expect.poll(() => processCount(page)).toBe('10 of 200 processes');
    // Header row and the ten failed processes: all in view.
    await expect.poll(() => page.getByRole('row').count()).toBe(11);
    await screenshotAll(page, 'processes');

    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByLabel('Ref', { exact: true }).fill('odd');
    await expect.poll(() => processCount(page)).toBe('100 of 200 processes');
    await page.getByLabel('Ref', { exact: true }).fill('');
    await page.getByLabel('State', { exact: true }).selectOption('idle');
    await expect.poll(() => processCount(page)).toBe('200 of 200 processes');
    await page.getByLabel('State', { exact: true }).selectOption('queued');
    await expect.poll(() => processCount(page)).toBe('0 of 200 processes');
    await page.getByLabel('State', { exact: true }).selectOption('');
    // Text in code: the failing program created as the 41st has `const n = 40;`.
    await page.getByLabel('Text in code').fill('const n = 40;');
    await expect.poll(() => processCount(page), { timeout: 20_000 }).toBe('1 of 200 processes');
    const failing40 = created[40]!.pid;
    await expect.poll(() => processRow(page, failing40).textContent()).toContain('boom 40');
  });

  it('kills a tight loop from its row', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    const loop = await client.createProcess('while (true) {}');
    await page.goto(`${server.url}/processes`);
    await expect
      .poll(() => processRow(page, loop.pid).textContent(), { timeout: 20_000 })
      .toContain('running');

    await page.getByRole('button', { name: `Kill process ${loop.pid}` }).click();
    await expect
      .poll(() => processRow(page, loop.pid).textContent(), { timeout: 20_000 })
      .toContain('canceled');
    expect((await client.get(loop.pid)).status).toBe('canceled');
  });

  it('Run again creates run 2, and both runs stay readable in the detail view', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    const process = await client.createProcess(
      "console.log('run at', Date.now()); output({ greeting: 'hello' });",
    );
    await client.wait(process.pid);
    await page.goto(`${server.url}/processes`);
    await processRow(page, process.pid)
      .getByRole('link', { name: `Process ${process.pid}` })
      .click();
    await page.getByRole('heading', { name: `Process ${process.pid}` }).waitFor();
    const run1 = page.getByRole('region', { name: 'Run 1', exact: true });
    await expect.poll(() => run1.textContent()).toContain('success');

    await page.getByRole('button', { name: 'Run again' }).click();
    const run2 = page.getByRole('region', { name: 'Run 2', exact: true });
    await expect.poll(() => run2.textContent(), { timeout: 20_000 }).toContain('success');
    expect((await client.get(process.pid)).runs).toBe(2);
    for (const run of [run1, run2]) {
      const text = await run.textContent();
      expect(text).toContain('greeting');
      expect(text).toContain('hello');
      expect(text).toContain('run at');
    }
    await screenshotAll(page, 'process-detail');
  });

  it('a failing program shows its error line highlighted in the code', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    const process = await client.createProcess(
      "const a = 1;\nconst b = a + 1;\nthrow new Error('bad line three');\n",
    );
    const done = await client.wait(process.pid);
    expect(done.error?.line).toBe(3);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const code = page.getByRole('figure', { name: 'Code' });
    const marked = code.locator('[aria-current="true"]');
    await expect.poll(() => marked.getAttribute('data-line'), { timeout: 20_000 }).toBe('3');
    expect(await marked.textContent()).toContain("throw new Error('bad line three')");
    expect(await marked.getByRole('note').textContent()).toContain('bad line three');
    await screenshotAll(page, 'process-error');
  });

  it('an image in an output (a tool result content item) is shown as an image', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    // A 2x2 red PNG.
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';
    const process = await client.createProcess(
      `output({ isError: false, content: [{ type: 'image', data: '${png}', mimeType: 'image/png' }] });`,
    );
    await client.wait(process.pid);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const image = page.getByRole('img', { name: 'Output 1, item 1 (image/png)' });
    await image.waitFor();
    expect(await image.evaluate((element) => (element as HTMLImageElement).naturalWidth)).toBe(2);
  });

  it('marks on the code what the check found: the errors that stopped a program, and warnings', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    const code = [
      "const n: number = 'seven';",
      "const hello = await tools.gret({ name: 'Ada' });",
      'output(hello);',
      'await tools.greet({});',
    ].join('\n');
    const process = await client.createProcess(code);
    expect(await client.wait(process.pid)).toMatchObject({
      status: 'failed',
      error: { code: 'CHECK_FAILED' },
    });
    await page.goto(`${server.url}/processes/${process.pid}`);
    const figure = page.getByRole('figure', { name: 'Code' });
    const notes = figure.getByRole('note');
    await expect.poll(() => notes.count()).toBe(3);
    expect(await notes.allTextContents()).toEqual([
      "warning, line 1:7 Type 'string' is not assignable to type 'number'.",
      'line 2:27 tools.gret does not exist. Did you mean tools.greet?',
      "line 4:19 tools.greet: input property 'name' is required.",
    ]);
    expect(await figure.locator('.code-line-error').count()).toBe(2);
    expect(await figure.locator('.code-line-warning').count()).toBe(1);
    // The run lists them too, readable on a narrow screen where the code scrolls sideways.
    expect(
      await page.getByRole('list', { name: 'What the check found' }).getByRole('listitem').allTextContents(),
    ).toEqual([
      'line 2:27 tools.gret does not exist. Did you mean tools.greet?',
      "line 4:19 tools.greet: input property 'name' is required.",
    ]);
    await screenshotAll(page, 'process-check-failed');
  });
});
