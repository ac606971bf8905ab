import { hostname } from 'node:os';
import type { MciServer } from '@mci/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.ts';
import { http, startServer } from '../support/start-server.ts';

/** The servers of this suite refuse pages; the few programs they run need no pre-run check. */
const QUIET = { check: 'off', concurrency: 1 } as const;

// A page on an unrelated site must not act on a local server through the user's browser: no
// text/plain bodies (sent cross-origin without a preflight), no foreign Origin, no rebound Host. Pages
// the CORS list allows get CORS headers. Checked over real HTTP and WebSocket upgrades.

const EVIL = 'http://evil.example';
const PAGE = 'http://localhost:5173';

let local: MciServer;
beforeAll(async () => {
  local = await startServer(QUIET);
});
afterAll(() => local?.close({ graceMs: 0 }));

const processCount = async (server: MciServer) =>
  (await http(server, 'GET', '/processes')).body.processes.length as number;

/** A raw `POST /processes` of `output(1)` to the local server, with `headers` as a page would send them. */
const createOutputOne = (headers: Record<string, string>) =>
  rawRequest(local.url, {
    method: 'POST',
    path: '/processes',
    headers,
    body: JSON.stringify({ code: 'output(1)' }),
  });

describe('local mode (no tokens)', { timeout: 60_000 }, () => {
  it('refuses a text/plain body with 415 and runs nothing', async () => {
    const before = await processCount(local);
    const answer = await createOutputOne({ 'Content-Type': 'text/plain', Origin: PAGE });
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      error: expect.stringContaining('application/json'),
    });
    const signal = await rawRequest(local.url, {
      method: 'POST',
      path: '/processes/1/signals/kill',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(signal.status).toBe(415);
    expect(await processCount(local)).toBe(before);
  });

  it('refuses a foreign Origin with 403 on every route, before anything runs', async () => {
    const before = await processCount(local);
    const create = await createOutputOne({ 'Content-Type': 'application/json', Origin: EVIL });
    expect(create.status).toBe(403);
    expect(create.body).toMatchObject({ code: 'FORBIDDEN', error: expect.stringContaining(EVIL) });
    expect(create.headers['access-control-allow-origin']).toBeUndefined();
    for (const path of ['/processes', '/tools.d.ts', '/healthz']) {
      expect((await rawRequest(local.url, { path, headers: { Origin: EVIL } })).status).toBe(403);
    }
    expect((await rawRequest(local.url, { path: '/processes', headers: { Origin: 'null' } })).status).toBe(
      403,
    );
    expect(await processCount(local)).toBe(before);
  });

  it('refuses a Host it does not listen on (DNS rebinding) with 421', async () => {
    const port = new URL(local.url).port;
    const answer = await rawRequest(local.url, {
      path: '/processes',
      headers: { Host: `rebind.evil.example:${port}` },
    });
    expect(answer.status).toBe(421);
    expect(answer.body).toMatchObject({
      code: 'MISDIRECTED_REQUEST',
      error: expect.stringContaining('rebind.evil.example'),
    });
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `app.localhost:${port}`]) {
      expect((await rawRequest(local.url, { path: '/healthz', headers: { Host: host } })).status).toBe(200);
    }
  });

  it('refuses WebSocket upgrades from a foreign Origin or Host, accepts the local page and no Origin', async () => {
    const port = new URL(local.url).port;
    const foreign = await rawRequest(local.url, { path: '/ws', upgrade: true, headers: { Origin: EVIL } });
    expect(foreign.upgraded).toBe(false);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ code: 'FORBIDDEN' });
    const rebound = await rawRequest(local.url, {
      path: '/ws',
      upgrade: true,
      headers: { Host: `rebind.evil.example:${port}` },
    });
    expect(rebound.status).toBe(421);
    expect(
      (await rawRequest(local.url, { path: '/ws', upgrade: true, headers: { Origin: PAGE } })).upgraded,
    ).toBe(true);
    expect((await rawRequest(local.url, { path: '/ws', upgrade: true })).upgraded).toBe(true);
    const elsewhere = await rawRequest(local.url, { path: '/nope', upgrade: true });
    expect(elsewhere).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', error: expect.any(String) } });
    // A page served by the server itself (its own origin) may use it too.
    const own = await rawRequest(local.url, { path: '/ws', upgrade: true, headers: { Origin: local.url } });
    expect(own.upgraded).toBe(true);
  });

  it('answers CORS preflights and puts CORS headers on answers, errors and /tools.d.ts for local pages', async () => {
    const preflight = await rawRequest(local.url, {
      method: 'OPTIONS',
      path: '/processes',
      headers: {
        Origin: PAGE,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(PAGE);
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('DELETE');
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain(
      'authorization',
    );
    for (const path of ['/tools.d.ts', '/processes', '/processes/999999']) {
      const answer = await rawRequest(local.url, { path, headers: { Origin: 'http://127.0.0.1:3000' } });
      expect(answer.headers['access-control-allow-origin']).toBe('http://127.0.0.1:3000');
    }
    const missing = await rawRequest(local.url, { path: '/processes/999999', headers: { Origin: PAGE } });
    expect(missing.status).toBe(404);
    expect(typeof missing.body.error).toBe('string');
  });
});

describe('configured origins and tokens', { timeout: 60_000 }, () => {
  it('with tokens: only the listed origins, Authorization allowed; * is refused at start', async () => {
    const token = 'secret-token-1';
    await expect(startServer({ tokens: [{ token, role: 'operator' }], corsOrigins: ['*'] })).rejects.toThrow(
      /only without tokens/,
    );
    await expect(startServer({ corsOrigins: ['not an origin'] })).rejects.toThrow(/is not an origin/);
    await using server = await startServer({
      ...QUIET,
      tokens: [{ token, role: 'operator' }],
      corsOrigins: ['https://chat.example.com'],
    });
    const listed = await rawRequest(server.url, {
      path: '/processes',
      headers: { Origin: 'https://chat.example.com', Authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe('https://chat.example.com');
    // Local pages are not allowed by default once tokens are in use.
    const localPage = await rawRequest(server.url, {
      path: '/processes',
      headers: { Origin: PAGE, Authorization: `Bearer ${token}` },
    });
    expect(localPage.status).toBe(403);
    const ws = await rawRequest(server.url, {
      path: `/ws?token=${token}`,
      upgrade: true,
      headers: { Origin: 'https://evil.example' },
    });
    expect(ws.status).toBe(403);
  });

  it('* lets any page read answers in local mode', async () => {
    await using server = await startServer({ ...QUIET, corsOrigins: ['*'] });
    const answer = await rawRequest(server.url, { path: '/processes', headers: { Origin: EVIL } });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe('*');
  });

  it('accepts the hosts of configured public URLs', async () => {
    await using server = await startServer({ ...QUIET, publicUrls: ['https://mci.example.org/'] });
    const ok = await rawRequest(server.url, { path: '/healthz', headers: { Host: 'mci.example.org' } });
    expect(ok.status).toBe(200);
    const other = await rawRequest(server.url, { path: '/healthz', headers: { Host: 'other.example.org' } });
    expect(other.status).toBe(421);
    // A page served at the public URL is the server's own, whatever Host the proxy forwards.
    const proxied = await rawRequest(server.url, {
      path: '/processes',
      headers: { Origin: 'https://mci.example.org' },
    });
    expect(proxied.status).toBe(200);
  });

  it("bound to every interface, it answers to the machine's host name", async () => {
    await using server = await startServer({
      ...QUIET,
      host: '0.0.0.0',
      insecure: true,
    });
    const url = `http://127.0.0.1:${server.port}`;
    const named = await rawRequest(url, {
      path: '/healthz',
      headers: { Host: `${hostname()}:${server.port}` },
    });
    expect(named.status).toBe(200);
    expect(
      (await rawRequest(url, { path: '/healthz', headers: { Host: 'rebind.evil.example' } })).status,
    ).toBe(421);
  });
});
