import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MciServer } from '@mci/server';
import { launchBrowser } from '@mci/test-support';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startServer } from '../support/start-server.ts';

// A page in Debian's Chromium, served from another port (another origin), drives a real server with
// fetch exactly as the MCI reference chat client does: JSON POSTs and DELETEs (CORS preflights), the
// process API of docs/server.md, and the `error` field of every failure. A page from an unrelated
// host name (mapped to 127.0.0.1 by Chromium's resolver) is refused and runs nothing.

const FOREIGN_HOST = 'evil.test';

/** The page's script: the reference client's calls, in order; the results land in `window.result`. */
const PAGE_SCRIPT = `
const server = new URLSearchParams(location.search).get('server');
const json = { 'Content-Type': 'application/json' };
async function call(method, path, body) {
  const response = await fetch(server + path, {
    method,
    headers: json,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const type = response.headers.get('content-type') || '';
  const data = type.startsWith('application/json') ? await response.json() : await response.text();
  return { status: response.status, type, data };
}
async function idle(pid) {
  for (;;) {
    const { data } = await call('GET', '/processes/' + pid);
    if (data.state === 'idle') return data;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
async function running(pid) {
  for (;;) {
    const { data } = await call('GET', '/processes/' + pid);
    if (data.state === 'running') return data;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
async function main() {
  const ref = 'browser-' + Date.now();
  const steps = {};
  const created = await call('POST', '/processes', {
    code: 'globalThis.n = (globalThis.n ?? 0) + 1; console.log("to stdout"); console.error("to stderr"); output({ answer: 42 })',
    ref,
  });
  steps.created = created;
  const pid = created.data.pid;
  steps.listed = await call('GET', '/processes?ref=' + ref);
  steps.first = await idle(pid);
  steps.output = await call('GET', '/processes/' + pid + '/output');
  steps.stdout = await call('GET', '/processes/' + pid + '/stdout');
  steps.stderr = await call('GET', '/processes/' + pid + '/stderr');
  const slow = (await call('POST', '/processes', { code: 'await new Promise((r) => setTimeout(r, 60000))', ref })).data.pid;
  await running(slow);
  steps.kill = await call('POST', '/processes/' + slow + '/signals/kill', {});
  steps.killed = await idle(slow);
  steps.rerun = await call('POST', '/processes/' + pid + '/signals/run', { force: true });
  steps.second = await idle(pid);
  steps.outputAgain = await call('GET', '/processes/' + pid + '/output');
  steps.deleted = await call('DELETE', '/processes/' + pid);
  steps.missing = await call('GET', '/processes/' + pid);
  steps.badBody = await call('POST', '/processes', { code: '' });
  return steps;
}
main().then(
  (steps) => { window.result = { ok: true, steps }; },
  (error) => { window.result = { ok: false, error: String(error) }; },
);
`;

/** The foreign page: one POST that must not run. */
const FOREIGN_SCRIPT = `
const server = new URLSearchParams(location.search).get('server');
fetch(server + '/processes', {
  method: 'POST',
  headers: { 'Content-Type': 'text/plain' },
  body: JSON.stringify({ code: 'output("from a foreign page")', ref: 'foreign' }),
}).then(
  (response) => { window.result = { ok: true, status: response.status }; },
  (error) => { window.result = { ok: false, error: String(error) }; },
);
`;

let server: MciServer;
let pages: Server;
let pagesPort: number;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  pages = createHttpServer((request, response) => {
    const script = request.url?.startsWith('/foreign') ? FOREIGN_SCRIPT : PAGE_SCRIPT;
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><title>MCI client</title><script type="module">${script}</script>`);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesPort = (pages.address() as AddressInfo).port;
  browser = await launchBrowser([`--host-resolver-rules=MAP ${FOREIGN_HOST} 127.0.0.1`]);
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await server?.close({ graceMs: 0 });
});

async function runPage(url: string): Promise<any> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.waitForFunction(() => (globalThis as { result?: unknown }).result !== undefined, undefined, {
      timeout: 60_000,
    });
    return await page.evaluate(() => (globalThis as { result?: unknown }).result);
  } finally {
    await page.close();
  }
}

describe('a browser page on another origin', { timeout: 120_000 }, () => {
  it('drives the full call sequence of the reference chat client', async () => {
    const result = await runPage(`http://127.0.0.1:${pagesPort}/?server=${encodeURIComponent(server.url)}`);
    expect(result.ok, result.error).toBe(true);
    const { steps } = result;
    // One match over every step, so a failure shows the whole sequence.
    expect(steps).toMatchObject({
      created: { status: 201, data: { pid: expect.any(Number) } },
      listed: {
        status: 200,
        data: { processes: [expect.objectContaining({ pid: steps.created.data.pid })] },
      },
      first: { state: 'idle', status: 'success' },
      output: { status: 200, data: { output: { answer: 42 }, outputs: [{ answer: 42 }], run: 1 } },
      stdout: { status: 200, type: expect.stringMatching(/^text\/plain/), data: 'to stdout\n' },
      stderr: { status: 200, data: 'to stderr\n' },
      kill: { status: 200 },
      killed: { state: 'idle', status: 'canceled' },
      rerun: { status: 200 },
      second: { status: 'success', run: 2 },
      outputAgain: { status: 200, data: { output: { answer: 42 }, run: 2 } },
      deleted: { status: 200 },
      missing: { status: 404, data: { error: expect.any(String) } },
      badBody: { status: 400, data: { error: expect.stringMatching(/code/) } },
    });
  });

  it('a page from an unrelated host is refused and runs nothing', async () => {
    const before = (await http(server, 'GET', '/processes?ref=foreign')).body.processes;
    const result = await runPage(
      `http://${FOREIGN_HOST}:${pagesPort}/foreign?server=${encodeURIComponent(server.url)}`,
    );
    // The answer is a 403 without CORS headers: the browser hides it from the page (a TypeError).
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/TypeError|Failed to fetch/) });
    expect((await http(server, 'GET', '/processes?ref=foreign')).body.processes).toEqual(before);
  });
});
