import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { connect, type ServerEvent, type ToolEvent } from '@mci/client';
import type { CallRecord } from '@mci/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteToolFileDir } from './support/greet-tools.ts';
import { listenLocal, request } from './support/http.ts';
import { mci } from './support/mci.ts';
import { freshDatabase } from './support/postgres.ts';
import { type Json, serveProcesses } from './support/serve-process.ts';
import { until } from './support/until.ts';

// The audit of calls through `mci serve`: a run calls an http tool whose local service echoes a
// secret key, fetches from 127.0.0.1, is denied one tool and waits for the approval of another; its
// calls are then listed a page at a time with their inputs, outcomes, decisions and who decided, the
// secret taken out. Another principal gets 404, bad pages 400, and the record survives kill -9 of the
// server (SQLite) and is the same on PostgreSQL.

const API_KEY = 'sk-audit-0123456789abcdefghijKLMN';
const { dir } = suiteToolFileDir(
  'mci-audit-',
  `schemaVersion: '1.0'
tools:
  - name: echo_key
    inputSchema: { type: object, properties: { q: { type: string } } }
    execution:
      type: http
      method: GET
      url: '{{env.SERVICE_URL}}/echo'
      headers: { Authorization: 'Bearer {{env.API_KEY}}' }
  - name: greet
    execution: { type: text, text: 'hello {{props.i}}' }
  - name: long_text
    execution: { type: text, text: '${'x'.repeat(600)}' }
  - name: wipe
    execution: { type: text, text: 'wiped' }
  - name: charge
    annotations: { destructiveHint: true }
    execution: { type: text, text: 'charged {{props.amount}}' }
`,
);
let service: Server;
let serviceUrl = '';

beforeAll(async () => {
  service = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    res.setHeader('content-type', 'text/plain');
    res.end(path === '/echo' ? `you sent ${req.headers.authorization}` : 'plain data');
  });
  serviceUrl = await listenLocal(service);
  writeFileSync(
    join(dir, 'config.yaml'),
    `file: tools.yaml
publicEnv: [SERVICE_URL]
allowNet: ['127.0.0.1']
limits: { auditValueBytes: 300 }
tokens:
  - { token: op-token, role: operator, id: op }
  - { token: alice-token, role: client, id: alice }
  - { token: mallory-token, role: client, id: mallory }
policies:
  - { tool: wipe, decision: deny }
  - { tool: charge, decision: ask }
`,
  );
});
afterAll(() => {
  service?.close();
});

const { serve } = serveProcesses(dir);

const PROGRAM = (service: string) => `
const echoed = await tools.echo_key({ q: 'hello' });
output(echoed.content[0].text);
const response = await fetch('${service}/data');
output(await response.text());
try { await tools.wipe({}); } catch (e) { output(e.code); }
for (let i = 0; i < 7; i++) await tools.greet({ i });
await tools.long_text({ pad: 'y'.repeat(400) });
output((await tools.charge({ amount: 5 })).content[0].text);
`;

/** Runs the program as alice, approves the charge as op, and returns the pid and alice's events. */
async function runAudited(url: string) {
  const call = (token: string) => (method: string, path: string, body?: unknown) =>
    request(url, method, path, body, token);
  const alice = call('alice-token');
  const op = call('op-token');
  await using client = await connect(url, { token: 'alice-token' });
  const events: ServerEvent[] = [];
  client.subscribe({ all: true }, { onEvent: (event) => events.push(event) });
  const created = await alice('POST', '/processes', { code: PROGRAM(serviceUrl) });
  expect(created.status).toBe(201);
  const pid = created.body.pid as number;
  const pending = await until(
    'the pending approval',
    () => op('GET', `/approvals?pid=${pid}&state=pending`).then((a) => a.body.items as Json[]),
    (items) => items.length === 1,
  );
  expect((await op('POST', `/approvals/${pending[0]!.id}/approve`, {})).status).toBe(200);
  const done = await until(
    'the process idle',
    () => alice('GET', `/processes/${pid}`).then((a) => a.body),
    (p) => p.state === 'idle',
  );
  expect(done.status).toBe('success');
  await until(
    'the tool events',
    async () => events.filter((event) => event.type === 'tool').length,
    (n) => n === 11,
  );
  return { pid, alice, op, mallory: call('mallory-token'), events };
}

/** Every call of run 1 of `pid`, read `limit` at a time. */
async function allCalls(get: (path: string) => Promise<{ body: Json }>, pid: number, limit: number) {
  const items: CallRecord[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = await get(
      `/processes/${pid}/runs/1/calls?limit=${limit}${cursor === undefined ? '' : `&cursor=${cursor}`}`,
    );
    items.push(...(page.body.items as CallRecord[]));
    cursor = page.body.nextCursor;
    if (cursor === undefined) return items;
  }
  throw new Error('more pages than calls');
}

/** What the audit must say of the run of {@link PROGRAM}. */
function expectAudit(items: CallRecord[], pid: number): void {
  expect(items.map((call) => `${call.position} ${call.name}`)).toEqual([
    '0 echo_key',
    '1 fetch',
    '2 wipe',
    ...Array.from({ length: 7 }, (_, i) => `${i + 3} greet`),
    '10 long_text',
    '11 charge',
  ]);
  for (const call of items) {
    expect(call).toMatchObject({ pid, run: 1 });
    expect(call.durationMs).toBeGreaterThanOrEqual(0);
    expect(Number.isNaN(Date.parse(call.startedAt))).toBe(false);
  }
  const [echo, fetched, wipe, greet, , , , , , , long, charge] = items;
  expect(echo).toMatchObject({ kind: 'tool', input: { q: 'hello' }, ok: true, decision: 'allow' });
  expect(echo!.result).toMatchObject({ isError: false, contentTypes: ['text'] });
  const echoed = JSON.stringify(echo!.result!.value);
  expect(echoed).toContain('you sent Bearer [redacted:API_KEY]');
  expect(JSON.stringify(items)).not.toContain(API_KEY.slice(0, 12));
  expect(fetched).toMatchObject({
    kind: 'fetch',
    name: 'fetch',
    input: { method: 'GET', url: `${serviceUrl}/data` },
    ok: true,
    decision: 'egress',
    result: { status: 200, bytes: 'plain data'.length, contentTypes: ['text/plain'], isError: false },
  });
  expect(wipe).toMatchObject({
    ok: false,
    decision: 'deny',
    rule: 0,
    error: { code: 'POLICY_DENIED', message: 'wipe is denied by policy rule 1' },
  });
  expect(wipe!.result).toBeUndefined();
  expect(greet).toMatchObject({
    input: { i: 0 },
    ok: true,
    result: { value: { content: [{ type: 'text', text: 'hello 0' }] } },
  });
  // Over `auditValueBytes` (300): the input is cut to a string, the result kept as its summary only.
  expect(long).toMatchObject({
    inputTruncated: true,
    ok: true,
    result: { truncated: true, contentTypes: ['text'] },
  });
  expect(long!.inputBytes).toBeGreaterThan(400);
  expect(Buffer.byteLength(long!.input as string)).toBeLessThanOrEqual(300);
  expect(long!.result!.bytes).toBeGreaterThan(600);
  expect(long!.result!.value).toBeUndefined();
  expect(charge).toMatchObject({
    input: { amount: 5 },
    ok: true,
    decision: 'ask',
    rule: 1,
    approval: { state: 'approved', decidedBy: 'op' },
    result: { value: { content: [{ type: 'text', text: 'charged 5' }] } },
  });
}

describe('the audit of calls', () => {
  it('lists the calls of a run with inputs, outcomes, decisions and who decided, and keeps them across kill -9 (SQLite)', {
    timeout: 120_000,
  }, async () => {
    const args = ['--config', 'config.yaml', '--db', join(dir, 'audit.db')];
    const env = { API_KEY, SERVICE_URL: serviceUrl };
    const first = serve(args, env);
    const url = await first.url;
    const { pid, alice, op, mallory, events } = await runAudited(url);
    const get = (path: string) => alice('GET', path);

    const items = await allCalls(get, pid, 50);
    expectAudit(items, pid);
    // Pages of any size make up the same list, each call once.
    expect(await allCalls(get, pid, 5)).toEqual(items);
    expect(await allCalls(get, pid, 1)).toEqual(items);
    expect(await allCalls((path) => op('GET', path), pid, 100)).toEqual(items);
    const firstPage = await get(`/processes/${pid}/runs/1/calls?limit=5`);
    expect(firstPage.body.nextCursor).toEqual(expect.any(String));

    // The tool events carry each tool call's summary (no input, no result value).
    const tools = events.filter((event): event is ToolEvent => event.type === 'tool' && event.pid === pid);
    expect(tools.map((event) => `${event.call?.position} ${event.name} ${event.isError}`)).toEqual([
      '0 echo_key false',
      '2 wipe true',
      ...Array.from({ length: 7 }, (_, i) => `${i + 3} greet false`),
      '10 long_text false',
      '11 charge false',
    ]);
    expect(tools.at(-1)!.call).toMatchObject({ decision: 'ask', approval: { decidedBy: 'op' } });
    expect(JSON.stringify(tools)).not.toContain('hello 0');
    expect(tools[0]!.call!.result).toEqual({
      bytes: expect.any(Number),
      isError: false,
      contentTypes: ['text'],
    });

    // Another principal: 404 like every process route, whatever the query.
    for (const path of [
      `/processes/${pid}/runs/1/calls`,
      `/processes/${pid}/runs/1/calls?cursor=nope`,
      `/processes/${pid}/runs/99/calls`,
    ]) {
      const answer = await mallory('GET', path);
      expect(answer.status, path).toBe(404);
      expect(answer.body.code).toBe('NOT_FOUND');
    }
    // Bad pages: 400 with the field; no such run: 404.
    for (const [query, path] of [
      ['cursor=abc', 'cursor'],
      ['cursor=-1', 'cursor'],
      ['cursor=', 'cursor'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=2.5', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=', 'limit'],
    ] as const) {
      const answer = await get(`/processes/${pid}/runs/1/calls?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body).toMatchObject({ code: 'VALIDATION', path });
    }
    expect((await get(`/processes/${pid}/runs/2/calls`)).status).toBe(404);
    expect((await get(`/processes/${pid}/runs/0/calls`)).status).toBe(400);
    // A cursor past the end (the last call's position, as the shared codec writes it) is an empty last page.
    const pastEnd = Buffer.from('[999]').toString('base64url');
    expect((await get(`/processes/${pid}/runs/1/calls?cursor=${pastEnd}`)).body).toEqual({ items: [] });

    // `mci logs --calls` prints one line per call.
    const logs = await mci(['logs', String(pid), '--calls', '--url', url, '--token', 'alice-token']);
    expect(logs.code, logs.stderr).toBe(0);
    const lines = logs.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(12);
    expect(lines[0]).toMatch(/^#0 tool echo_key \{"q":"hello"\} allow \d+ms ok text \d+ B$/);
    expect(lines[1]).toMatch(
      /^#1 fetch GET http:\/\/127\.0\.0\.1:\d+\/data egress \d+ms ok 200 text\/plain 10 B$/,
    );
    expect(lines[2]).toMatch(/^#2 tool wipe \{\} deny \(rule 1\) \d+ms error POLICY_DENIED: wipe is denied/);
    expect(lines[11]).toMatch(/^#11 tool charge \{"amount":5\} ask \(rule 2\): approved by op \d+ms ok text/);
    expect(logs.stdout).not.toContain(API_KEY.slice(0, 12));

    // kill -9, then a new server on the same database: the same record.
    first.child.kill('SIGKILL');
    await first.exited;
    const second = serve(args, env);
    const again = await second.url;
    const after = await allCalls((path) => request(again, 'GET', path, undefined, 'alice-token'), pid, 4);
    expect(after).toEqual(items);
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('keeps the same record on PostgreSQL', { timeout: 120_000 }, async () => {
    await using db = await freshDatabase();
    const server = serve(['--config', 'config.yaml', '--db', db.url], { API_KEY, SERVICE_URL: serviceUrl });
    const url = await server.url;
    const { pid, alice, mallory } = await runAudited(url);
    const get = (path: string) => alice('GET', path);
    const items = await allCalls(get, pid, 50);
    expectAudit(items, pid);
    expect(await allCalls(get, pid, 3)).toEqual(items);
    expect((await mallory('GET', `/processes/${pid}/runs/1/calls`)).status).toBe(404);
    expect((await get(`/processes/${pid}/runs/1/calls?cursor=x1`)).status).toBe(400);
    server.child.kill('SIGTERM');
    await server.exited;
  });
});
