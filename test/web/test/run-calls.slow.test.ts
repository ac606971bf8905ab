import { createServer } from 'node:http';
import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

// The calls of a run in the console's process view, as the server's audit records them: a tool call
// that acted, a fetch of a local service, a call the policy denied and one a person approved, each
// with its input, outcome, duration, decision and who decided.

describe('the calls of a run', () => {
  it('shows every tool call and fetch with input, outcome, duration, decision and who decided', async () => {
    const service = createServer((req, res) =>
      res.setHeader('content-type', 'text/plain').end(req.url === '/charge' ? 'charged' : 'pong'),
    );
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const serviceUrl = `http://127.0.0.1:${(service.address() as { port: number }).port}`;
    await using server = await startServer({
      allowNet: ['127.0.0.1'],
      policies: [
        { tool: 'shopping_list', decision: 'deny' },
        { fetch: '*', paths: ['/charge'], decision: 'ask' },
      ],
    });
    await using client = await testClient(server);
    await using browser = await launchBrowser();
    try {
      const process = await client.createProcess(`
        output((await tools.greet({ name: 'Ada' })).content[0].text);
        output(await (await fetch('${serviceUrl}/ping')).text());
        try { await tools.shopping_list({ items: [] }); } catch (e) { output(e.code); }
        output(await (await fetch('${serviceUrl}/charge', { method: 'POST', body: 'amount=5' })).text());
      `);
      const pending = await expect
        .poll(async () => (await client.listApprovals({ pid: process.pid, state: 'pending' })).items)
        .toHaveLength(1)
        .then(async () => (await client.listApprovals({ pid: process.pid, state: 'pending' })).items);
      await client.approve(pending[0]!.id);
      expect((await client.wait(process.pid, { timeoutMs: 20_000 })).status).toBe('success');

      const { page } = await openPage(browser);
      await page.goto(`${server.url}/processes/${process.pid}`);
      const table = page.getByRole('table', { name: 'Calls of run 1' });
      await table.waitFor();
      const rows = table.getByRole('row');
      await expect.poll(() => rows.count()).toBe(5);
      const cells = async (n: number) =>
        (await rows.nth(n).getByRole('cell').allTextContents()).map((text) => text.trim());
      expect(await cells(1)).toEqual([
        '1',
        'greet',
        '{"name":"Ada"}',
        expect.stringMatching(/^ok · text · \d+ B$/),
        expect.stringMatching(/ms$/),
        'allow',
        '',
      ]);
      expect(await cells(2)).toEqual([
        '2',
        `fetch GET ${serviceUrl}/ping`,
        expect.stringContaining('"url"'),
        'ok · 200 · text/plain · 4 B',
        expect.stringMatching(/ms$/),
        'egress',
        '',
      ]);
      expect(await cells(3)).toEqual([
        '3',
        'shopping_list',
        '{"items":[]}',
        'POLICY_DENIED: shopping_list is denied by policy rule 1',
        expect.stringMatching(/ms$/),
        'deny (rule 1)',
        '',
      ]);
      expect(await cells(4)).toEqual([
        '4',
        `fetch POST ${serviceUrl}/charge`,
        `{"method":"POST","url":"${serviceUrl}/charge","body":"amount=5"}`,
        'ok · 200 · text/plain · 7 B',
        expect.stringMatching(/ms$/),
        'ask (rule 2)',
        'approved by local',
      ]);
      expect(await page.getByRole('alert').count()).toBe(0);
      await page.getByRole('heading', { name: 'Calls' }).evaluate((heading) => heading.scrollIntoView());
      await screenshotAll(page, 'run-calls');
    } finally {
      service.close();
    }
  });
});
