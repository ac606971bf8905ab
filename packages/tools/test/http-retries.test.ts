import { describe, expect, it } from 'vitest';
import { sendJson, startHttpServer } from './helpers/http-test-server.ts';
import { runnerFor, runnerForTool } from './helpers/tool-dir.ts';

describe('http tools: retries and timeouts', () => {
  it('retries 503 until 200, does not retry 404, and honours Retry-After', async () => {
    let calls = 0;
    const times: number[] = [];
    await using server = await startHttpServer({
      '/flaky': (_req, res) => {
        calls++;
        if (calls < 3) res.writeHead(503).end('busy');
        else sendJson(res, 200, { ok: true, calls });
      },
      '/later': (_req, res) => {
        times.push(performance.now());
        if (times.length === 1) res.writeHead(429, { 'retry-after': '1' }).end('slow down');
        else res.writeHead(200).end('done');
      },
    });
    const retries = { attempts: 3, backoff_ms: 20 };
    await using t = await runnerFor({
      tools: [
        {
          name: 'flaky',
          execution: {
            type: 'http',
            method: 'POST',
            url: `${server.url}/flaky`,
            body: { type: 'json', content: { a: 1 } },
            retries,
          },
        },
        { name: 'missing', execution: { type: 'http', url: `${server.url}/missing`, retries } },
        {
          name: 'later',
          execution: { type: 'http', url: `${server.url}/later`, retries: { attempts: 2, backoff_ms: 0 } },
        },
        { name: 'no-retry', execution: { type: 'http', url: `${server.url}/flaky` } },
      ],
    });

    const flaky = await t.runner.execute('flaky');
    expect(flaky.isError, flaky.error).toBe(false);
    expect(flaky.structuredContent).toEqual({ ok: true, calls: 3 });
    expect(server.requests.filter((r) => r.url === '/flaky').every((r) => r.body === '{"a":1}')).toBe(true);

    const missing = await t.runner.execute('missing');
    expect(missing.isError).toBe(true);
    expect(missing.error).toBe('HTTP 404 Not Found: no route for /missing');
    expect(missing.metadata?.status_code).toBe(404);
    expect(server.count('/missing')).toBe(1);

    const later = await t.runner.execute('later');
    expect(later.isError).toBe(false);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);

    calls = 0;
    const once = await t.runner.execute('no-retry');
    expect(once.isError).toBe(true);
    expect(once.error).toBe('HTTP 503 Service Unavailable: busy');
    expect(calls).toBe(1);
  });

  it('gives up after the last attempt and retries dropped connections', async () => {
    let drops = 0;
    await using server = await startHttpServer({
      '/down': (_req, res) => res.writeHead(500).end('x'.repeat(2000)),
      '/drop': (_req, res) => {
        drops++;
        if (drops === 1) res.socket?.destroy();
        else res.writeHead(200).end('back');
      },
    });
    await using t = await runnerFor({
      tools: [
        {
          name: 'down',
          execution: { type: 'http', url: `${server.url}/down`, retries: { attempts: 3, backoff_ms: 10 } },
        },
        {
          name: 'drop',
          execution: { type: 'http', url: `${server.url}/drop`, retries: { attempts: 2, backoff_ms: 10 } },
        },
      ],
    });
    const down = await t.runner.execute('down');
    expect(down.isError).toBe(true);
    expect(server.count('/down')).toBe(3);
    expect(down.error).toMatch(/^HTTP 500 Internal Server Error: x{500}$/);

    const drop = await t.runner.execute('drop');
    expect(drop.isError, drop.error).toBe(false);
    expect(drop.content).toEqual([{ type: 'text', text: 'back' }]);
    expect(drops).toBe(2);
  });

  it('bounds the whole request with timeout_ms', async () => {
    let answered = false;
    await using server = await startHttpServer({
      '/slow': (_req, res) => {
        setTimeout(() => {
          answered = true;
          res.end('late');
        }, 10_000).unref();
      },
    });
    await using t = await runnerForTool({
      name: 'slow',
      execution: {
        type: 'http',
        url: `${server.url}/slow`,
        timeout_ms: 200,
        retries: { attempts: 3, backoff_ms: 10 },
      },
    });
    const result = await t.runner.execute('slow');
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/timed out after 200 ms/);
    // It gave up before the server ever answered.
    expect(answered).toBe(false);
  });
});
