import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startHttpServer } from './helpers/http-test-server.ts';
import { runnerFor, runnerForTool, toolDir } from './helpers/tool-dir.ts';

// The request's deadline (AbortSignal.timeout, joined to the caller's signal with AbortSignal.any)
// ends the body phase too, follows caller and runner signals, and never holds the process open.
describe('http request deadline', () => {
  const stalled = {
    // Headers and a first chunk at once, then nothing: only a bound on the whole request ends it.
    '/stall': (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first chunk');
    },
  };

  it('bounds the body with timeout_ms when there are no retries', async () => {
    await using server = await startHttpServer(stalled);
    await using t = await runnerForTool({
      name: 'stall',
      execution: { type: 'http', url: `${server.url}/stall`, timeout_ms: 300 },
    });
    // The body never ends: only the deadline can end the request.
    const result = await t.runner.execute('stall');
    expect(result).toMatchObject({ isError: true });
    expect(result.error).toMatch(/timed out after 300 ms/);
  });

  it('ends each of many concurrent requests on its own deadline', async () => {
    // Answers after 400 ms; tools with 100 ms and with 5000 ms deadlines run at the same time.
    await using server = await startHttpServer({
      '/slow': (_req: unknown, res: import('node:http').ServerResponse) => {
        setTimeout(() => res.end('done'), 400);
      },
    });
    const tool = (name: string, timeout_ms: number) => ({
      name,
      execution: { type: 'http', url: `${server.url}/slow`, timeout_ms },
    });
    await using t = await runnerFor({ tools: [tool('short', 100), tool('long', 5000)] });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.runner.execute(i % 2 ? 'short' : 'long')),
    );
    results.forEach((result, i) => {
      if (i % 2) expect(result.error).toMatch(/timed out after 100 ms/);
      else expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'done' }] });
    });
  });

  it('cancels a body in flight through the caller signal and through the runner signal', async () => {
    await using server = await startHttpServer(stalled);
    const lifetime = new AbortController();
    await using t = await runnerFor(
      { tools: [{ name: 'stall', execution: { type: 'http', url: `${server.url}/stall` } }] },
      { signal: lifetime.signal },
    );
    const caller = new AbortController();
    const mine = t.runner.execute('stall', {}, { signal: caller.signal });
    const others = [t.runner.execute('stall'), t.runner.execute('stall')];
    while (server.count('/stall') < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    caller.abort();
    expect(await mine).toMatchObject({ isError: true, metadata: { canceled: true } });
    // The runner signal (one listener for all its requests) ends the other two.
    lifetime.abort();
    for (const result of await Promise.all(others)) {
      expect(result).toMatchObject({ isError: true, metadata: { canceled: true } });
    }
  });

  it('does not keep the process alive once its requests are done (10-minute timeout)', async () => {
    await using dir = await toolDir({
      tools: [{ name: 'get', execution: { type: 'http', url: '{{env.URL}}', timeout_ms: 600_000 } }],
    });
    const tools = new URL('../src/index.ts', import.meta.url).href;
    const script = `
      const { createToolRunner, loadTools } = await import(${JSON.stringify(tools)});
      const { createServer } = await import('node:http');
      const server = createServer((_req, res) => res.end('ok'));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = 'http://127.0.0.1:' + server.address().port + '/';
      const runner = createToolRunner(await loadTools(process.argv[1]), { env: { URL: url } });
      const result = await runner.execute('get');
      if (result.isError) throw new Error(result.error);
      server.closeAllConnections();
      server.close();`;
    // A process held open by the 10-minute timer is killed at this bound, and execFile rejects.
    await promisify(execFile)(
      process.execPath,
      ['--conditions=@mci/source', '--input-type=module', '-e', script, dir.file],
      { timeout: 60_000 },
    );
  });
});
