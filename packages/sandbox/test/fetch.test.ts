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
    } else if (req.url === '/see-other') {
      res.statusCode = 303;
      res.setHeader('location', '/json');
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

  it('denies every host no rule allows with EGRESS_DENIED, before any DNS look-up', async () => {
    const before = srv.seen.length;
    const r = await run(
      denied,
      `const out: string[] = [];
for (const url of ['https://example.com/', 'http://no-such-host.invalid/', 'http://127.0.0.1:${srv.port}/']) {
  try { await fetch(url); out.push('reached ' + url) } catch (e) { out.push([e.name, e.code, e.message].join(' | ')) }
}
return out;`,
    );
    expect(r.outputs[0]).toEqual([
      "TypeError | EGRESS_DENIED | fetch: example.com is not allowed: the sandbox reaches only the hosts a rule allows (--allow-net example.com, allowNet in the server's config, or a fetch rule in its policies)",
      expect.stringMatching(/^TypeError \| EGRESS_DENIED \| fetch: no-such-host\.invalid is not allowed/),
      expect.stringContaining(`(--allow-net 127.0.0.1:${srv.port},`),
    ]);
    expect(srv.seen.length).toBe(before);
  });

  it('a host a gate allows still may not reach internal addresses, after DNS resolution (IPv6 forms too)', async () => {
    const before = srv.seen.length;
    const r = await run(
      denied,
      `const out: string[] = [];
for (const url of ['http://127.0.0.1:${srv.port}/', 'http://localhost:${srv.port}/', 'http://[::1]:${srv.port}/', 'http://[::ffff:127.0.0.1]:${srv.port}/', 'http://0.0.0.0:${srv.port}/', 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/']) {
  try { await fetch(url); out.push('reached ' + url) } catch (e) { out.push(e.name + ': ' + e.message) }
}
return out;`,
      { timeoutMs: 20_000, fetchGate: { fetch: (_request, send) => send({ allow: () => true }) } },
    );
    const messages = r.outputs[0] as string[];
    expect(messages).toHaveLength(7);
    for (const m of messages)
      expect(m).toMatch(/^TypeError: fetch failed: .*loopback, private or link-local address/);
    expect(messages[0]).toContain(`(--allow-net 127.0.0.1:${srv.port})`);
    expect(srv.seen.length).toBe(before);
  });

  it('follows an allowed redirect: a 303 goes on as a GET without the body', async () => {
    const r = await run(
      allowed,
      `const res = await fetch('http://127.0.0.1:${srv.port}/see-other', { method: 'POST', body: 'x' });
return [res.redirected, new URL(res.url).pathname, (await res.json()).method];`,
    );
    expect(r.outputs[0]).toEqual([true, '/json', 'GET']);
  });

  it('checks every redirect hop as a new request', async () => {
    const code = `try { await fetch('http://127.0.0.1:${srv.port}/redirect-internal') } catch (e) { return [e.code ?? null, e.message] }`;
    // The redirect's host is not in --allow-net: denied before it is looked up.
    const r = await run(allowed, code);
    expect(r.outputs[0]).toEqual([
      'EGRESS_DENIED',
      expect.stringMatching(/^fetch: 127\.0\.0\.2:\d+ is not allowed/),
    ]);
    // A gate that allows every host: the address check still refuses it.
    const gated = await run(allowed, code, {
      fetchGate: { fetch: (_request, send) => send({ allow: () => true }) },
    });
    expect(gated.outputs[0]).toEqual([
      null,
      expect.stringMatching(/127\.0\.0\.2:\d+ resolves to 127\.0\.0\.2, a loopback/),
    ]);
  });

  it('only allows the port named in --allow-net', async () => {
    const other = await startServer();
    try {
      const r = await run(
        allowed,
        `try { await fetch('http://127.0.0.1:${other.port}/') } catch (e) { return e.message }`,
      );
      expect(r.outputs[0]).toMatch(new RegExp(`^fetch: 127\\.0\\.0\\.1:${other.port} is not allowed`));
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
  // One address inside each range of the IANA special-purpose address registries (IPv4 and IPv6),
  // as of 2026: https://www.iana.org/assignments/iana-ipv4-special-registry/ and
  // https://www.iana.org/assignments/iana-ipv6-special-registry/
  const SPECIAL: Array<[range: string, address: string]> = [
    ['0.0.0.0/8 this network', '0.1.2.3'],
    ['10.0.0.0/8 private', '10.1.2.3'],
    ['100.64.0.0/10 shared address space (CGNAT)', '100.64.0.1'],
    ['127.0.0.0/8 loopback', '127.0.0.1'],
    ['127.0.0.0/8 loopback, far end', '127.255.255.254'],
    ['169.254.0.0/16 link local', '169.254.169.254'],
    ['172.16.0.0/12 private', '172.31.255.1'],
    ['192.0.0.0/24 IETF protocol assignments', '192.0.0.9'],
    ['192.0.0.0/29 IPv4 service continuity', '192.0.0.1'],
    ['192.0.0.170/32 NAT64/DNS64 discovery', '192.0.0.170'],
    ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.1'],
    ['192.31.196.0/24 AS112-v4', '192.31.196.1'],
    ['192.52.193.0/24 AMT', '192.52.193.1'],
    ['192.88.99.0/24 6to4 relay anycast (deprecated)', '192.88.99.1'],
    ['192.168.0.0/16 private', '192.168.1.1'],
    ['192.175.48.0/24 direct delegation AS112', '192.175.48.1'],
    ['198.18.0.0/15 benchmarking', '198.19.0.1'],
    ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.1'],
    ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.1'],
    ['224.0.0.0/4 multicast', '224.0.0.1'],
    ['240.0.0.0/4 reserved', '240.0.0.1'],
    ['255.255.255.255/32 limited broadcast', '255.255.255.255'],
    ['::1/128 loopback', '::1'],
    ['::/128 unspecified', '::'],
    ['::ffff:0:0/96 IPv4-mapped, of loopback', '::ffff:127.0.0.1'],
    ['::ffff:0:0/96 IPv4-mapped, hex form', '::ffff:7f00:1'],
    ['::/96 IPv4-compatible (deprecated), of loopback', '::7f00:1'],
    ['::/96 IPv4-compatible (deprecated), of a public address', '::101:101'],
    ['::ffff:0:0:0/96 IPv4-translated (RFC 6145)', '::ffff:0:7f00:1'],
    ['64:ff9b::/96 IPv4-IPv6 translation', '64:ff9b::7f00:1'],
    ['64:ff9b:1::/48 local-use IPv4/IPv6 translation', '64:ff9b:1::1'],
    ['100::/64 discard-only', '100::1'],
    ['100:0:0:1::/64 dummy IPv6 prefix', '100:0:0:1::1'],
    ['2001::/23 IETF protocol assignments', '2001:1::1'],
    ['2001::/32 Teredo', '2001::1'],
    ['2001::/32 Teredo, embedding a public server', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['2001:1::1/128 port control protocol anycast', '2001:1::1'],
    ['2001:1::2/128 TURN anycast', '2001:1::2'],
    ['2001:1::3/128 DNS-SD SRP anycast', '2001:1::3'],
    ['2001:2::/48 benchmarking', '2001:2::1'],
    ['2001:3::/32 AMT', '2001:3::1'],
    ['2001:4:112::/48 AS112-v6', '2001:4:112::1'],
    ['2001:10::/28 ORCHID (deprecated)', '2001:10::1'],
    ['2001:20::/28 ORCHIDv2', '2001:20::1'],
    ['2001:30::/28 drone remote ID entity tags', '2001:30::1'],
    ['2001:db8::/32 documentation', '2001:db8::1'],
    ['2002::/16 6to4', '2002:7f00:1::1'],
    ['2620:4f:8000::/48 direct delegation AS112', '2620:4f:8000::1'],
    ['3fff::/20 documentation', '3fff::1'],
    ['5f00::/16 segment routing SIDs', '5f00::1'],
    ['fc00::/7 unique local', 'fd00::1'],
    ['fe80::/10 link-local', 'fe80::1'],
    ['fe80::/10 link-local, with a zone', 'fe80::1%eth0'],
    ['fec0::/10 site-local (deprecated)', 'fec0::1'],
    ['ff00::/8 multicast', 'ff02::1'],
  ];

  it.each(SPECIAL)('classifies %s as internal (%s)', (_, address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it('classifies public unicast addresses as public, and anything else as internal', () => {
    for (const a of ['1.1.1.1', '8.8.8.8', '192.0.3.1', '2606:4700:4700::1111', '::ffff:1.1.1.1'])
      expect(isInternalAddress(a), a).toBe(false);
    for (const a of ['not-an-ip', '', '0x7f.1', '2130706433', '127.1'])
      expect(isInternalAddress(a), a).toBe(true);
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
