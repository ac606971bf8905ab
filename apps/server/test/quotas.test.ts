import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@mci/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerSettings } from '../src/config/load-config.ts';
import { createServer, type MciServer, type ServerOptions } from '../src/server.ts';
import { greetToolDir } from './support/greet-tools.ts';
import { request } from './support/http.ts';
import { type Json, openJsonSocket } from './support/json-socket.ts';
import { httpClient } from './support/mcp-fixture.ts';
import { serveProcesses } from './support/serve-process.ts';

// Quotas per principal against a real server with tokens: maxRunning keeps the queue fair, the
// per-minute quotas answer 429 QUOTA_EXCEEDED with Retry-After on every transport and create nothing,
// bad quota config is refused with the field named, and /metrics shows the use by principal.

const { dir, file } = greetToolDir('mci-quotas-');
const OPERATOR = 'operator-token-4c1e9b20';
const ALICE = 'alice-token-7f02d6a3';
const BOB = 'bob-token-1a9c5e88';
const CAROL = 'carol-token-62d0b4f9';
const DAVE = 'dave-token-e35a1c07';
const ERIN = 'erin-token-8b7f2d14';
const TOKENS: ServerOptions['tokens'] = [
  { token: OPERATOR, role: 'operator', id: 'operator' },
  { token: ALICE, role: 'client', id: 'alice' },
  { token: BOB, role: 'client', id: 'bob' },
  { token: CAROL, role: 'client', id: 'carol' },
  { token: DAVE, role: 'client', id: 'dave' },
  { token: ERIN, role: 'client', id: 'erin' },
];

const { serve } = serveProcesses(dir);

/** A server with `quotas`, without the pre-run check (the quotas do not depend on it). */
const withQuotas = (quotas: ServerOptions['quotas'], options: Partial<ServerOptions> = {}) =>
  createServer({ port: 0, file, logLevel: 'silent', check: 'off', tokens: TOKENS, quotas, ...options });

/**
 * Per-minute quotas count in the clock's minutes: when less than `needMs` of this one is left, waits
 * for the next, so a test's runs fall in one window.
 */
async function roomInWindow(needMs = 20_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

/** POST /processes with the answer's `Retry-After` header. */
async function create(url: string, token: string, body: Json) {
  const response = await fetch(`${url}/processes`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('Retry-After'),
    body: (await response.json()) as Json,
  };
}

const sleepCode = (ms: number) => `await new Promise((resolve) => setTimeout(resolve, ${ms}))`;

describe('quotas per principal', () => {
  // The per-minute tests share one server, each with a principal of its own: alice (runsPerMinute
  // 2), carol (runsPerMinute 1), dave (cpuMsPerMinute 100); erin has a label and no quota, so she
  // is not counted under "other".
  let perMinute: MciServer;
  beforeAll(async () => {
    perMinute = await withQuotas(
      {
        principals: {
          alice: { runsPerMinute: 2 },
          carol: { runsPerMinute: 1 },
          dave: { cpuMsPerMinute: 100 },
          erin: {},
        },
      },
      { concurrency: 1 },
    );
  });
  afterAll(async () => {
    await perMinute?.close({ graceMs: 0 });
  });

  it('maxRunning 1: twenty queued processes of alice never run two at once, and bob runs past them', {
    timeout: 60_000,
  }, async () => {
    await using server = await withQuotas(
      { principals: { alice: { maxRunning: 1 } } },
      { concurrency: 3, limits: { rateLimitPerSecond: 10_000 } },
    );
    const watcher = await openJsonSocket(server.wsUrl, OPERATOR);
    await watcher.request({ type: 'subscribe', all: true, since: 0 });
    const alicePids = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const created = await create(server.url, ALICE, {
        code: sleepCode(1000),
        ref: 'alice',
        timeoutMs: 60_000,
      });
      expect(created.status).toBe(201);
      alicePids.add(created.body.pid);
    }
    const bobPids: number[] = [];
    for (let i = 0; i < 6; i++)
      bobPids.push((await create(server.url, BOB, { code: `output(${i})` })).body.pid);
    const idle = (pid: number) => (m: Json) => m.type === 'process' && m.pid === pid && m.state === 'idle';
    await Promise.all(bobPids.map((pid) => watcher.waitFor(idle(pid))));
    // Two of alice's ran one after the other (her work flows too), and most still wait.
    const aliceIdle = () =>
      watcher.messages.filter((m) => m.type === 'process' && alicePids.has(m.pid) && m.state === 'idle');
    await watcher.waitFor((m) => m.type === 'process' && alicePids.has(m.pid) && m.state === 'idle');
    const firstDone = aliceIdle()[0]!.pid;
    await watcher.waitFor(
      (m) => m.type === 'process' && alicePids.has(m.pid) && m.pid !== firstDone && m.state === 'idle',
    );
    expect(server.manager.stats().byState.queued).toBeGreaterThan(10);
    // Replay every process event in order: alice never had two running.
    const running = new Set<number>();
    let most = 0;
    for (const event of watcher.messages.filter((m) => m.type === 'process' && alicePids.has(m.pid))) {
      if (event.state === 'running') running.add(event.pid);
      else running.delete(event.pid);
      most = Math.max(most, running.size);
    }
    expect(most).toBe(1);
    for (const pid of bobPids) {
      const answer = await request(server.url, 'GET', `/processes/${pid}`, undefined, BOB);
      expect(answer.body.status).toBe('success');
    }
    watcher.close();
    await server.close({ graceMs: 0 });
  });

  it('runsPerMinute: 429 QUOTA_EXCEEDED with Retry-After over HTTP, a WebSocket error and an MCP error; nothing is created; bob is not affected', {
    timeout: 60_000,
  }, async () => {
    await roomInWindow();
    const server = perMinute;
    for (let i = 0; i < 2; i++)
      expect((await create(server.url, ALICE, { code: 'output(1)' })).status).toBe(201);
    // Created idle, it starts no run: not counted.
    const idle = await create(server.url, ALICE, { code: 'output(2)', autorun: false });
    expect(idle.status).toBe(201);

    const refused = await create(server.url, ALICE, { code: 'output(3)' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      message: expect.stringContaining('your quota (runsPerMinute 2)'),
    });
    expect(refused.body.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.body.retryAfter).toBeLessThanOrEqual(60);
    expect(refused.retryAfter).toBe(String(refused.body.retryAfter));

    const signal = await fetch(`${server.url}/processes/${idle.body.pid}/signals/run`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ALICE}` },
      body: '{}',
    });
    expect(signal.status).toBe(429);
    expect(signal.headers.get('Retry-After')).toMatch(/^\d+$/);

    const ws = await openJsonSocket(server.wsUrl, ALICE);
    const wsCreate = await ws.request({ type: 'process.create', code: 'output(4)' });
    expect(wsCreate).toMatchObject({ type: 'error', code: 'QUOTA_EXCEEDED', retryAfter: expect.any(Number) });
    const wsRun = await ws.request({ type: 'process.signal', pid: idle.body.pid, signal: 'run' });
    expect(wsRun).toMatchObject({ type: 'error', code: 'QUOTA_EXCEEDED', retryAfter: expect.any(Number) });
    ws.close();
    // @mci/client hands the seconds to wait to its caller.
    const client = await connect(server.url, { token: ALICE });
    await expect(client.createProcess('output(7)')).rejects.toMatchObject({
      name: 'ClientError',
      code: 'QUOTA_EXCEEDED',
      retryAfter: expect.any(Number),
    });
    await client.close();

    const mcp = await httpClient(`${server.url}/mcp`, ALICE);
    const call = mcp.callTool({ name: 'run_code', arguments: { code: 'output(5)' } });
    const mcpError = await call.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(mcpError).toBeInstanceOf(McpError);
    expect((mcpError as McpError).data).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      retryAfter: expect.any(Number),
    });
    await mcp.close();

    // Nothing half-created: alice has her two runs and the idle process, which is still idle.
    const list = await request(server.url, 'GET', '/processes', undefined, ALICE);
    expect(list.body.processes).toHaveLength(3);
    expect(list.body.processes.find((p: Json) => p.pid === idle.body.pid)).toMatchObject({
      state: 'idle',
      runs: 0,
    });
    // Another principal's runs are its own.
    expect((await create(server.url, BOB, { code: 'output(6)' })).status).toBe(201);

    const metrics = await fetch(`${server.url}/metrics`, {
      headers: { Authorization: `Bearer ${OPERATOR}` },
    });
    const text = await metrics.text();
    expect(text).toContain('mci_principal_window_runs{principal="alice"} 2');
    expect(text).toContain('mci_principal_window_runs{principal="other"} 1');
    expect(text).toContain('mci_quota_refusals_total{principal="alice"} 6');
    expect(text).toMatch(/mci_principal_queued\{principal="other"\} \d/);
    // Only the principals named in the quotas get a label of their own.
    expect(text).not.toContain('principal="bob"');
  });

  it("a stream's block past runsPerMinute is not run: its intent says why, and the stream goes on", {
    timeout: 60_000,
  }, async () => {
    await roomInWindow();
    const server = perMinute;
    const ws = await openJsonSocket(server.wsUrl, CAROL);
    expect(await ws.request({ type: 'stream.start', streamId: 'turn' })).toMatchObject({ type: 'reply' });
    const text = '```ts exec=true\noutput(1)\n```\nand again\n```ts exec=true\noutput(2)\n```\n';
    expect(await ws.request({ type: 'stream.chunk', streamId: 'turn', text })).toMatchObject({
      type: 'reply',
    });
    expect(await ws.request({ type: 'stream.end', streamId: 'turn' })).toMatchObject({ type: 'reply' });
    const first = await ws.waitFor((m) => m.type === 'intent' && m.index === 0);
    const second = await ws.waitFor((m) => m.type === 'intent' && m.index === 1);
    expect(first.pid).toEqual(expect.any(Number));
    expect(second).toMatchObject({ rejected: expect.stringContaining('your quota (runsPerMinute 1)') });
    expect(second.pid).toBeUndefined();
    await ws.waitFor((m) => m.type === 'stream.result' && m.streamId === 'turn');
    ws.close();
  });

  it('cpuMsPerMinute: a CPU-heavy run finishes, then new runs are refused until the window ends', {
    timeout: 60_000,
  }, async () => {
    await roomInWindow();
    const server = perMinute;
    const heavy = await create(server.url, DAVE, {
      code: 'const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++; output(n > 0)',
      block: true,
    });
    // The run went past the quota while it ran: it is not killed for it.
    expect(heavy.status).toBe(201);
    expect(heavy.body).toMatchObject({ status: 'success' });
    const refused = await create(server.url, DAVE, { code: 'output(1)' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      message: expect.stringMatching(
        /used \d+ ms of sandbox CPU time this minute, your quota \(cpuMsPerMinute 100\)/,
      ),
    });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await create(server.url, ERIN, { code: 'output(1)' })).status).toBe(201);
    const metrics = await fetch(`${server.url}/metrics`, {
      headers: { Authorization: `Bearer ${OPERATOR}` },
    });
    expect(await metrics.text()).toMatch(/mci_principal_window_cpu_ms\{principal="dave"\} [1-9]\d{2,}/);
  });

  it('refuses bad quota config with the field named: an id no token has, a value, an unknown field', async () => {
    await expect(withQuotas({ principals: { alcie: { runsPerMinute: 5 } } })).rejects.toMatchObject({
      name: 'ConfigError',
      code: 'CONFIG_INVALID',
      path: 'quotas.principals.alcie',
      message: expect.stringContaining(
        'no token has the principal id "alcie" (the principals are operator, alice, bob, carol, dave, erin)',
      ),
    });
    await expect(withQuotas({ default: { runsPerMinute: 0 } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      path: 'quotas.default.runsPerMinute',
    });
    // Without tokens the one principal is `local`.
    await expect(
      createServer({ port: 0, file, logLevel: 'silent', quotas: { principals: { alice: {} } } }),
    ).rejects.toMatchObject({ path: 'quotas.principals.alice' });
    const config = join(dir, 'quotas.yaml');
    writeFileSync(config, 'quotas:\n  principals:\n    alice: { cpuMsPerMinute: -1 }\n');
    expect(() => loadServerSettings({ config }, {}, dir)).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        file: config,
        path: 'quotas.principals.alice.cpuMsPerMinute',
      }),
    );
    writeFileSync(config, 'quotas:\n  default: { maxRuns: 3 }\n');
    expect(() => loadServerSettings({ config }, {}, dir)).toThrow(
      expect.objectContaining({
        path: 'quotas.default.maxRuns',
        message: expect.stringContaining('unknown field'),
      }),
    );
    writeFileSync(
      config,
      'quotas:\n  default: { runsPerMinute: 30 }\n  principals:\n    alice: { maxRunning: 2 }\n',
    );
    expect(loadServerSettings({ config }, {}, dir).quotas).toEqual({
      default: { runsPerMinute: 30 },
      principals: { alice: { maxRunning: 2 } },
    });
    // `mci serve` refuses to start (exit 2) and names the field.
    writeFileSync(
      config,
      `tokens:\n  - { token: ${ALICE}, role: client, id: alice }\nquotas:\n  principals:\n    mallory: { runsPerMinute: 1 }\n`,
    );
    const refusedServe = serve(['--config', config, '--file', file]);
    expect(await refusedServe.exited).toBe(2);
    expect(refusedServe.stderr()).toContain(
      'quotas.principals.mallory: no token has the principal id "mallory"',
    );
  });
});
