import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/server.ts';
import { greetToolDir } from './support/greet-tools.ts';
import { postProcess, request, requestsAs } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { mci } from './support/mci.ts';
import { httpClient } from './support/mcp-fixture.ts';
import type { Json } from './support/serve-process.ts';
import { CAS_INCREMENT_PROGRAM } from './support/state-programs.ts';

// Sessions and their durable state through the HTTP API, the WebSocket and programs' `state` global,
// on an SQLite file with two principals.

const { dir, file: tools } = greetToolDir('mci-state-', 'Hello!');
const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789';
const CAROL = 'carol-token-0123456789';
const DAVE = 'dave-token-0123456789';
const ERIN = 'erin-token-0123456789';
const tokens = [
  { token: ALICE, role: 'client' as const, id: 'alice' },
  { token: BOB, role: 'client' as const, id: 'bob' },
  { token: CAROL, role: 'client' as const, id: 'carol' },
  { token: DAVE, role: 'client' as const, id: 'dave' },
  { token: ERIN, role: 'client' as const, id: 'erin' },
];

async function start(name: string, limits: Record<string, number> = {}) {
  return createServer({
    port: 0,
    file: tools,
    logLevel: 'silent',
    db: join(dir, `${name}.db`),
    tokens,
    limits,
    check: 'off',
    concurrency: 1,
  });
}

/** Runs `code` to the end (in `session`, if given) and answers its result. */
async function run(url: string, code: string, token: string, session?: string | true): Promise<Json> {
  const created = await postProcess(
    url,
    { code, block: true, ...(session !== undefined && { session }) },
    token,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

describe('sessions and state', () => {
  // The tests with the default options share one server; each keeps its sessions under a principal
  // of its own (alice, carol, dave, erin; bob is the other principal that must see nothing).
  let shared: MciServer;
  beforeAll(async () => {
    shared = await start('shared');
  });
  afterAll(async () => {
    await shared?.close({ graceMs: 0 });
  });

  it('keeps state across runs of a session, apart from other sessions and principals', async () => {
    const server = shared;
    const alice = requestsAs(server.url, ALICE);
    const bob = requestsAs(server.url, BOB);
    const first = await run(
      server.url,
      `await state.set('rows', { n: 10n, at: new Date(0), m: new Map([[1, 'a']]) }); return state.keys('');`,
      ALICE,
      'chat-1',
    );
    expect(first.status).toBe('success');
    expect(first.session).toBe('chat-1');
    expect(first.outputs).toEqual([['rows']]);
    const second = await run(
      server.url,
      `const v = await state.get('rows'); return [typeof v.n, v.at instanceof Date, v.m.get(1)];`,
      ALICE,
      'chat-1',
    );
    expect(second.outputs).toEqual([['bigint', true, 'a']]);
    // Another session of the same principal, a run without a session, and another principal read nothing.
    expect(
      (await run(server.url, `return await state.get('rows') ?? 'none'`, ALICE, 'chat-2')).outputs,
    ).toEqual(['none']);
    expect((await run(server.url, `return await state.get('rows') ?? 'none'`, ALICE)).outputs).toEqual([
      'none',
    ]);
    const stolen = await postProcess(server.url, { code: 'return 1', session: 'chat-1' }, BOB);
    expect(stolen.status).toBe(409);
    expect(stolen.body.path).toBe('session');
    expect((await bob('GET', '/sessions/chat-1')).status).toBe(404);
    expect((await bob('GET', '/sessions/chat-1/state/rows')).status).toBe(404);
    expect((await bob('PUT', '/sessions/chat-1/state/rows', { value: 1 })).status).toBe(404);
    expect((await bob('GET', '/sessions')).body).toEqual({ items: [] });

    // HTTP: the session, its processes and keys; a value in the output encoding; CAS; delete.
    const detail = await alice('GET', '/sessions/chat-1');
    expect(detail.status).toBe(200);
    expect(detail.body.processes.map((p: Json) => p.session)).toEqual(['chat-1', 'chat-1']);
    expect(detail.body.state).toEqual([{ key: 'rows', bytes: expect.any(Number), version: 1 }]);
    const value = await alice('GET', '/sessions/chat-1/state/rows');
    expect(value.body.value.n).toEqual({ $type: 'bigint', value: '10' });
    const stale = await alice('PUT', '/sessions/chat-1/state/rows', { value: 2, ifVersion: 0 });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('VERSION_CONFLICT');
    const put = await alice('PUT', '/sessions/chat-1/state/count', { value: 5, ifVersion: 0 });
    expect(put.body).toEqual({ key: 'count', version: 1 });
    expect((await run(server.url, `return await state.get('count')`, ALICE, 'chat-1')).outputs).toEqual([5]);
    const list = await alice('GET', '/sessions?limit=1');
    expect(list.body.items).toHaveLength(1);
    expect(list.body.nextCursor).toEqual(expect.any(String));
    expect((await alice('DELETE', '/sessions/chat-1/state/count')).body).toEqual({
      key: 'count',
      deleted: true,
    });
    expect((await bob('DELETE', '/sessions/chat-1')).status).toBe(404);
    expect((await alice('DELETE', '/sessions/chat-1')).status).toBe(200);
    expect((await alice('GET', '/sessions/chat-1')).status).toBe(404);
  });

  it('makes a session when asked, over HTTP and WebSocket (process.create, stream.start, state.*)', async () => {
    const server = shared;
    const made = await run(server.url, `await state.set('k', 1); return 1`, CAROL, true);
    expect(made.session).toMatch(/^[0-9a-f-]{36}$/);
    const socket = await openJsonSocket(server.wsUrl, CAROL);
    try {
      const created = await socket.request({
        type: 'process.create',
        code: 'return await state.get("k")',
        session: made.session,
      });
      expect(created.result.process.session).toBe(made.session);
      const got = await socket.request({ type: 'state.get', session: made.session, key: 'k' });
      expect(got.result.entry).toMatchObject({ key: 'k', value: 1, version: 1 });
      const set = await socket.request({
        type: 'state.set',
        session: made.session,
        key: 'k',
        value: 2,
        ifVersion: 1,
      });
      expect(set.result).toEqual({ key: 'k', version: 2 });
      const started = await socket.request({
        type: 'stream.start',
        streamId: 's1',
        session: 'stream-session',
      });
      expect(started.result).toEqual({ streamId: 's1', session: 'stream-session' });
      await socket.request({
        type: 'stream.chunk',
        streamId: 's1',
        text: "Saving.\n\n```ts exec=true\nawait state.set('from-stream', 7)\n```\n",
      });
      await socket.request({ type: 'stream.end', streamId: 's1' });
      const result = await socket.waitFor((m) => m.type === 'stream.result' && m.streamId === 's1');
      expect(result.processes.map((p: Json) => [p.session, p.status])).toEqual([
        ['stream-session', 'success'],
      ]);
      const fromStream = await socket.request({
        type: 'state.get',
        session: 'stream-session',
        key: 'from-stream',
      });
      expect(fromStream.result.entry.value).toBe(7);
      const listed = await socket.request({ type: 'session.list' });
      expect(listed.result.items.map((s: Json) => s.id).sort()).toEqual(
        [made.session, 'stream-session'].sort(),
      );
      const bad = await socket.request({ type: 'state.get', session: 'has:colon', key: 'k' });
      expect(bad.type).toBe('error');
    } finally {
      socket.close();
    }
    const bob = await openJsonSocket(server.wsUrl, BOB);
    try {
      const denied = await bob.request({ type: 'state.get', session: made.session, key: 'k' });
      expect(denied).toMatchObject({ type: 'error', code: 'NOT_FOUND' });
    } finally {
      bob.close();
    }
  });

  it('ends 20 concurrent compare-and-set increments at exactly 20', { timeout: 60_000 }, async () => {
    const server = shared;
    const runs = await Promise.all(
      Array.from({ length: 20 }, () => run(server.url, CAS_INCREMENT_PROGRAM, DAVE, 'counter')),
    );
    expect(runs.map((r) => r.status)).toEqual(Array(20).fill('success'));
    expect(
      (await request(server.url, 'GET', '/sessions/counter/state/n', undefined, DAVE)).body,
    ).toMatchObject({
      value: 20,
      version: 20,
    });
  });

  it('expires entries after ttlMs, refuses values past the limits and bad arguments', async () => {
    await using server = await start('limits', { stateValueBytes: 100, stateSessionBytes: 150 });
    const alice = requestsAs(server.url, ALICE);
    const ttl = await run(
      server.url,
      `await state.set('t', 1, { ttlMs: 600 }); const before = await state.get('t');
       await new Promise((r) => setTimeout(r, 800)); return [before, await state.get('t'), await state.keys()];`,
      ALICE,
      'ttl',
    );
    expect(ttl.outputs).toEqual([[1, { $type: 'undefined' }, []]]);
    const errors = await run(
      server.url,
      `const out = [];
       for (const f of [
         () => state.set('big', 'x'.repeat(200)),
         async () => { await state.set('a', 'x'.repeat(80)); await state.set('b', 'x'.repeat(80)); },
         () => state.set('', 1),
         () => state.set('k', () => 1),
         () => state.set('k', 1, { ttlMs: -1 }),
         () => state.set('k', 1, { ifVersion: 'x' }),
         () => state.set('k', 1, { nope: true }),
         () => state.get('k', { withVersion: true }).then(() => state.set('k', 1, { ifVersion: 7 })),
         () => state.set('k'),
       ]) {
         try { await f(); out.push('ok'); } catch (e) { out.push(e.code ?? e.name + ': ' + e.message); }
       }
       return out;`,
      ALICE,
      'limits',
    );
    expect(errors.outputs[0]).toEqual([
      'LIMIT_EXCEEDED',
      'LIMIT_EXCEEDED',
      'TypeError: state.set: the key must not be empty',
      expect.stringMatching(/^TypeError: .*function/),
      expect.stringMatching(/^RangeError: state.set: ttlMs must be an integer/),
      expect.stringMatching(/^RangeError: state.set: ifVersion must be/),
      'TypeError: state.set: unknown option "nope" (known: ttlMs, ifVersion)',
      'VERSION_CONFLICT',
      'TypeError: state.set: a value is required (state.delete(key) removes a key)',
    ]);
    const badValue = await alice('PUT', '/sessions/limits/state/v', {
      value: { $type: 'bigint', value: 'x' },
    });
    expect(badValue.status).toBe(400);
    expect(badValue.body.path).toBe('value');
    const slash = await alice('PUT', '/sessions/limits/state/a%2Fb', { value: 1 });
    expect(slash.body).toEqual({ key: 'a/b', version: 1 });
    const badKey = await alice('PUT', `/sessions/limits/state/${'k'.repeat(300)}`, { value: 1 });
    expect(badKey.status).toBe(400);
    expect(badKey.body.path).toBe('key');
    const badId = await postProcess(server.url, { code: 'return 1', session: 'a b' }, ALICE);
    expect(badId.status).toBe(400);
    expect(badId.body.path).toBe('session');
  });

  it('gives the run_code calls of one MCP session one session, apart from another MCP session', async () => {
    const server = shared;
    const runCode = async (client: Awaited<ReturnType<typeof httpClient>>, code: string) =>
      ((await client.callTool({ name: 'run_code', arguments: { code } })) as Json).structuredContent;
    const one = await httpClient(server.url, ERIN);
    const two = await httpClient(server.url, ERIN);
    try {
      await runCode(one, `await state.set('seen', 41)`);
      expect(await runCode(one, `return (await state.get('seen')) + 1`)).toMatchObject({ outputs: [42] });
      expect(await runCode(two, `return (await state.get('seen')) ?? 'none'`)).toMatchObject({
        outputs: ['none'],
      });
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('mci sessions and mci state get|set|rm', async () => {
    const server = shared;
    const as = (token: string) => ['--url', server.url, '--token', token];
    await run(server.url, `await state.set('big', 12345678901234567890n)`, ALICE, 'cli-1');
    const listed = await mci(['sessions', ...as(ALICE)]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^cli-1 {2}alice {2}created /);
    expect((await mci(['sessions', 'cli-1', ...as(ALICE)])).stdout).toMatch(/state big {2}\d+ B {2}v1/);
    expect((await mci(['state', 'get', 'cli-1', 'big', ...as(ALICE)])).stdout).toBe(
      '{"$type":"bigint","value":"12345678901234567890"}\n',
    );
    expect(
      (await mci(['state', 'set', 'cli-1', 'n', '{"a":1}', '--if-version', '0', ...as(ALICE)])).stdout,
    ).toBe('1\n');
    const stale = await mci(['state', 'set', 'cli-1', 'n', '2', '--if-version', '0', ...as(ALICE)]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/VERSION_CONFLICT|version 1, not 0/);
    expect((await run(server.url, `return await state.get('n')`, ALICE, 'cli-1')).outputs).toEqual([
      { a: 1 },
    ]);
    expect((await mci(['state', 'rm', 'cli-1', 'n', ...as(ALICE)])).code).toBe(0);
    const submitted = await mci(['submit', '-', '--wait', '--session', 'cli-1', ...as(ALICE)], {
      input: `output(typeof (await state.get('big')))`,
    });
    expect(submitted.stdout).toContain('bigint');
    expect((await mci(['state', 'get', 'cli-1', 'big', ...as(BOB)])).code).toBe(1);
    expect((await mci(['state', 'set', 'cli-1', 'x', 'not json', ...as(ALICE)])).code).toBe(2);
    expect((await mci(['state', 'move', 'cli-1', 'x', ...as(ALICE)])).code).toBe(2);
  });

  it('retention deletes idle sessions with no process left, expired entries and the state of deleted processes', async () => {
    const db = join(dir, 'retention.db');
    await using server = await createServer({
      port: 0,
      file: tools,
      logLevel: 'silent',
      db,
      tokens,
      check: 'off',
      concurrency: 1,
      retention: { maxAgeMs: 300, intervalMs: 100 },
    });
    await run(server.url, `await state.set('k', 1); await state.set('t', 1, { ttlMs: 1 })`, ALICE, 'old');
    await run(server.url, `await state.set('own', 1)`, ALICE);
    await expect
      .poll(async () => (await request(server.url, 'GET', '/sessions/old', undefined, ALICE)).status, {
        timeout: 20_000,
        interval: 100,
      })
      .toBe(404);
    const file = new DatabaseSync(db, { readOnly: true });
    try {
      await expect
        .poll(() => file.prepare('SELECT scope, key FROM state').all(), { timeout: 20_000, interval: 100 })
        .toEqual([]);
    } finally {
      file.close();
    }
  });

  it('stores a secret in a value redacted, as outputs are', async () => {
    const secret = 'hunter2-very-secret-value';
    await using server = await createServer({
      port: 0,
      file: tools,
      logLevel: 'silent',
      db: join(dir, 'redacted.db'),
      tokens,
      check: 'off',
      concurrency: 1,
      env: { STATE_SECRET: secret },
      secrets: ['STATE_SECRET'],
    });
    await run(server.url, `await state.set('creds', { note: 'pw is ${secret}' })`, ALICE, 'redacted');
    const read = await run(server.url, `return await state.get('creds')`, ALICE, 'redacted');
    expect(JSON.stringify(read.outputs)).not.toContain(secret);
    expect(read.outputs[0].note).toMatch(/^pw is \[redacted:STATE_SECRET\]$/);
    const file = new DatabaseSync(join(dir, 'redacted.db'), { readOnly: true });
    try {
      expect(JSON.stringify(file.prepare('SELECT value FROM state').all())).not.toContain(secret);
    } finally {
      file.close();
    }
  });
});
