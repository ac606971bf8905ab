import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPool, isInternalAddress, parseAllowNet } from '../src/index.ts';
import { run } from './helpers.ts';

/** A disposable HTTP server on 127.0.0.1, port 0, recording requests. */
async function startServer(): Promise<
  { server: Server; port: number; seen: Array<{ req: IncomingMessage; body: string }> } & AsyncDisposable
> {
  const seen: Array<{ req: IncomingMessage; body: string }> = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ req, body });
    if (req.url === '/json') {
      res.setHeader('content-type', 'application/json');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.end(
        JSON.stringify({
          hello: 'world',
          method: req.method,
          body,
          type: req.headers['content-type'] ?? null,
          custom: req.headers['x-custom'] ?? null,
        }),
      );
    } else if (req.url === '/big') {
      res.end('x'.repeat(5000));
    } else if (req.url === '/redirect-internal') {
      res.statusCode = 302;
      res.setHeader('location', `http://127.0.0.2:${(server.address() as AddressInfo).port}/json`);
      res.end();
    } else if (req.url === '/missing') {
      res.statusCode = 404;
      res.statusMessage = 'Not Found';
      res.end('nope');
    } else {
      res.end('plain text');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    seen,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let srv: Awaited<ReturnType<typeof startServer>>;
let allowed: ReturnType<typeof createSandboxPool>;
const denied = createSandboxPool({ size: 1 });
beforeAll(async () => {
  srv = await startServer();
  allowed = createSandboxPool({
    size: 1,
    allowNet: [`127.0.0.1:${srv.port}`],
    limits: { maxFetchResponseBytes: 1000 },
  });
});
afterAll(async () => {
  await Promise.all([allowed.close(), denied.close()]);
  await srv[Symbol.asyncDispose]();
});

describe('fetch', () => {
  it('reaches an allowed local server: method, headers, JSON body, Response API', async () => {
    const r = await run(
      allowed,
      `const res = await fetch('http://127.0.0.1:${srv.port}/json', { method: 'post', headers: { 'X-Custom': 'yes' }, body: { a: 1 } });
return [res.status, res.ok, res.statusText, res.url, res.headers.get('content-type'), res.headers.getSetCookie(), await res.json(), res.bodyUsed];`,
    );
    expect(r.status).toBe('success');
    expect(r.outputs[0]).toEqual([
      200,
      true,
      'OK',
      `http://127.0.0.1:${srv.port}/json`,
      'application/json',
      ['a=1', 'b=2'],
      { hello: 'world', method: 'POST', body: '{"a":1}', type: 'application/json', custom: 'yes' },
      true,
    ]);
  });

  it('passes string bodies, reports non-2xx statuses and reads text and bytes', async () => {
    const r = await run(
      allowed,
      `const a = await fetch('http://127.0.0.1:${srv.port}/json', { method: 'PUT', body: 'raw', headers: [['content-type', 'text/plain']] });
const b = await fetch(new URL('http://127.0.0.1:${srv.port}/missing'));
const c = await fetch('http://127.0.0.1:${srv.port}/');
return [(await a.json()).body, b.status, b.ok, b.statusText, await b.text(), Array.from(await c.bytes()).length];`,
    );
    expect(r.outputs[0]).toEqual(['raw', 404, false, 'Not Found', 'nope', 10]);
  });

  it('refuses loopback without --allow-net, after DNS resolution (localhost too)', async () => {
    const before = srv.seen.length;
    const r = await run(
      denied,
      `const out: string[] = [];
for (const url of ['http://127.0.0.1:${srv.port}/', 'http://localhost:${srv.port}/', 'http://[::1]:${srv.port}/', 'http://0.0.0.0:${srv.port}/', 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/']) {
  try { await fetch(url); out.push('reached ' + url) } catch (e) { out.push(e.name + ': ' + e.message) }
}
return out;`,
      { timeoutMs: 20_000 },
    );
    const messages = r.outputs[0] as string[];
    expect(messages).toHaveLength(6);
    for (const m of messages)
      expect(m).toMatch(/^TypeError: fetch failed: .*loopback, private or link-local address/);
    expect(messages[0]).toContain(`(--allow-net 127.0.0.1:${srv.port})`);
    expect(srv.seen.length).toBe(before);
  });

  it('checks every redirect hop against the policy', async () => {
    const r = await run(
      allowed,
      `try { await fetch('http://127.0.0.1:${srv.port}/redirect-internal') } catch (e) { return e.message }`,
    );
    expect(r.outputs[0]).toMatch(/127\.0\.0\.2:\d+ resolves to 127\.0\.0\.2, a loopback/);
  });

  it('only allows the port named in --allow-net', async () => {
    const other = await startServer();
    try {
      const r = await run(
        allowed,
        `try { await fetch('http://127.0.0.1:${other.port}/') } catch (e) { return e.message }`,
      );
      expect(r.outputs[0]).toMatch(/loopback, private or link-local/);
      expect(other.seen).toHaveLength(0);
    } finally {
      await other[Symbol.asyncDispose]();
    }
  });

  it('rejects a response larger than maxFetchResponseBytes', async () => {
    const r = await run(
      allowed,
      `try { await fetch('http://127.0.0.1:${srv.port}/big') } catch (e) { return e.message }`,
    );
    expect(r.outputs[0]).toBe('fetch: the response body is larger than maxFetchResponseBytes (1000 bytes)');
  });

  it('rejects non-http URLs and bodies on GET', async () => {
    const r = await run(
      allowed,
      `const out: string[] = [];
for (const f of [() => fetch('file:///etc/passwd'), () => fetch('data:text/plain,hi'), () => fetch('relative/path'), () => fetch('http://127.0.0.1:${srv.port}/', { body: 'x' })]) {
  try { await f(); out.push('no error') } catch (e) { out.push(e.message) }
}
return out;`,
    );
    expect(r.outputs[0]).toEqual([
      'fetch: only http: and https: URLs are supported, got file:',
      'fetch: only http: and https: URLs are supported, got data:',
      'fetch: invalid URL "relative/path" (an absolute http: or https: URL is needed)',
      'fetch: a GET or HEAD request cannot have a body',
    ]);
  });

  it('shares the tool-call limits: concurrency and count', async () => {
    let active = 0;
    let peak = 0;
    const slow = createServer((_, res) => {
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => {
        active--;
        res.end('ok');
      }, 30);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const port = (slow.address() as AddressInfo).port;
    const pool = createSandboxPool({
      size: 1,
      allowNet: [`127.0.0.1:${port}`],
      limits: { maxConcurrentToolCalls: 2, maxToolCalls: 8 },
    });
    try {
      const r = await run(
        pool,
        `const all = await Promise.allSettled(Array.from({ length: 10 }, () => fetch('http://127.0.0.1:${port}/').then((x) => x.text())));
return all.map((x) => x.status === 'fulfilled' ? x.value : x.reason.message);`,
      );
      const results = r.outputs[0] as string[];
      expect(results.filter((x) => x === 'ok')).toHaveLength(8);
      expect(results.filter((x) => x.startsWith('Call limit reached'))).toHaveLength(2);
      expect(peak).toBe(2);
    } finally {
      await pool.close();
      slow.close();
    }
  });

  it('is aborted when the execution is killed', async () => {
    const hang = createServer(() => {});
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const port = (hang.address() as AddressInfo).port;
    const pool = createSandboxPool({ size: 1, allowNet: [`127.0.0.1:${port}`] });
    try {
      let connected!: () => void;
      const gotConnection = new Promise<void>((resolve) => (connected = resolve));
      let closed!: () => void;
      const gotClose = new Promise<void>((resolve) => (closed = resolve));
      hang.on('connection', (socket) => {
        connected();
        socket.on('close', () => closed());
      });
      const execution = pool.execute({ code: `await fetch('http://127.0.0.1:${port}/')` });
      await gotConnection;
      execution.kill();
      expect((await execution.result).status).toBe('canceled');
      await gotClose;
    } finally {
      await pool.close();
      hang.closeAllConnections();
      hang.close();
    }
  });
});

describe('the egress policy', () => {
  it('classifies internal addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '224.0.0.1',
      'not-an-ip',
    ]) {
      expect(isInternalAddress(a), a).toBe(true);
    }
    for (const a of ['1.1.1.1', '8.8.8.8', '2606:4700:4700::1111', '::ffff:1.1.1.1'])
      expect(isInternalAddress(a), a).toBe(false);
  });

  it('parses --allow-net entries and names a bad one', () => {
    expect(parseAllowNet(['localhost', 'api.internal:8080', '[::1]:3000', '10.0.0.5'])).toEqual([
      { host: 'localhost' },
      { host: 'api.internal', port: 8080 },
      { host: '::1', port: 3000 },
      { host: '10.0.0.5' },
    ]);
    expect(() => parseAllowNet(['host:99999'])).toThrow(
      'allowNet entry "host:99999" is not HOST, HOST:PORT or [IPV6]:PORT',
    );
  });
});
