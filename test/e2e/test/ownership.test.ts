import type { MciServer } from '@mci/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// Tokens, roles and ownership: clients see and signal only their own processes; operators see all.

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-9876543210';
const OPS = 'operator-token-abcdef';

let server: MciServer;
beforeAll(async () => {
  server = await startServer({
    tokens: [
      { token: ALICE, role: 'client', id: 'alice' },
      { token: BOB, role: 'client', id: 'bob' },
      { token: OPS, role: 'operator', id: 'ops' },
    ],
  });
});
afterAll(() => server?.close({ graceMs: 0 }));

describe('auth and ownership', { timeout: 60_000 }, () => {
  it('HTTP needs a valid bearer token except for /healthz', async () => {
    expect(await http(server, 'GET', '/processes')).toMatchObject({
      status: 401,
      body: { code: 'UNAUTHORIZED' },
    });
    expect(await http(server, 'GET', '/processes', { token: 'wrong' })).toMatchObject({ status: 401 });
    expect((await http(server, 'GET', '/processes', { token: ALICE })).status).toBe(200);
    expect((await http(server, 'GET', '/healthz')).status).toBe(200);
    expect(await http(server, 'GET', '/metrics', { token: ALICE })).toMatchObject({
      status: 403,
      body: { code: 'FORBIDDEN' },
    });
    expect((await http(server, 'GET', '/metrics', { token: OPS })).status).toBe(200);
  });

  it('WebSocket takes the header or ?token=, and refuses bad tokens with 401', async () => {
    await expect(TestClient.open(server.wsUrl)).rejects.toThrow(/401/);
    await expect(TestClient.open(server.wsUrl, { token: 'nope', query: true })).rejects.toThrow(/401/);
    await using viaQuery = await TestClient.open(server.wsUrl, { token: ALICE, query: true });
    expect(viaQuery.messages[0]).toMatchObject({ type: 'hello', principal: { id: 'alice', role: 'client' } });
    await using viaHeader = await TestClient.open(server.wsUrl, { token: OPS });
    expect(viaHeader.messages[0]).toMatchObject({
      type: 'hello',
      principal: { id: 'ops', role: 'operator' },
    });
  });

  it('client A cannot see or signal client B processes; an operator can', async () => {
    const created = await http(server, 'POST', '/processes', {
      token: BOB,
      body: { code: 'while (true) {}', ref: 'bob-ref', timeout: 120_000 },
    });
    const pid = created.body.pid as number;
    for (const [method, path] of [
      ['GET', `/processes/${pid}`],
      ['GET', `/processes/${pid}/code`],
      ['GET', `/processes/${pid}/output`],
      ['GET', `/processes/${pid}/runs/1`],
      ['POST', `/processes/${pid}/signals/kill`],
      ['DELETE', `/processes/${pid}`],
    ] as const) {
      expect((await http(server, method, path, { token: ALICE })).status, `${method} ${path}`).toBe(404);
    }
    expect((await http(server, 'GET', '/processes?ref=bob-ref', { token: ALICE })).body.processes).toEqual(
      [],
    );
    expect((await http(server, 'GET', '/processes?ref=bob-ref', { token: BOB })).body.processes).toHaveLength(
      1,
    );
    expect((await http(server, 'GET', '/processes?ref=bob-ref', { token: OPS })).body.processes).toHaveLength(
      1,
    );

    await using alice = await TestClient.open(server.wsUrl, { token: ALICE });
    expect(await alice.request({ type: 'process.get', pid })).toMatchObject({
      type: 'error',
      code: 'NOT_FOUND',
    });
    expect(await alice.request({ type: 'process.signal', pid, signal: 'kill' })).toMatchObject({
      type: 'error',
      code: 'NOT_FOUND',
    });
    expect(await alice.request({ type: 'subscribe', pid })).toMatchObject({
      type: 'error',
      code: 'NOT_FOUND',
    });
    expect(await alice.request({ type: 'subscribe', pid, since: 0 })).toMatchObject({
      type: 'error',
      code: 'NOT_FOUND',
    });
    await alice.ok({ type: 'subscribe', all: true, since: 0 });
    await alice.ok({ type: 'subscribe', ref: 'bob-ref', since: 0 });

    await using ops = await TestClient.open(server.wsUrl, { token: OPS });
    await ops.ok({ type: 'subscribe', pid, since: 0 });
    expect(ops.events().some((e) => e.type === 'process' && e.pid === pid)).toBe(true);
    const killed = await ops.ok({ type: 'process.signal', pid, signal: 'kill' });
    expect(killed.result.process.pid).toBe(pid);
    await ops.waitIdle(pid);
    const mine = await alice.ok({ type: 'process.create', code: 'output("alice")' });
    await alice.waitIdle(mine.result.process.pid);
    // Alice saw none of Bob's events, through `all`, `ref` or replay.
    expect(alice.events().filter((e) => 'pid' in e && e.pid === pid)).toEqual([]);
  });

  it("a client cannot push to, end or follow another client's stream", async () => {
    await using alice = await TestClient.open(server.wsUrl, { token: ALICE });
    await using bob = await TestClient.open(server.wsUrl, { token: BOB });
    await alice.ok({ type: 'stream.start', streamId: 'alice-turn' });
    for (const request of [
      { type: 'stream.chunk', streamId: 'alice-turn', text: '```ts exec=true\noutput(1)\n```\n' },
      { type: 'stream.end', streamId: 'alice-turn' },
      { type: 'subscribe', streamId: 'alice-turn', since: 0 },
    ] as const) {
      expect(await bob.request(request), request.type).toMatchObject({ type: 'error', code: 'NOT_FOUND' });
    }
    // Stream ids are scoped to their client: bob gets his own stream of that id, and learns nothing.
    expect(await bob.request({ type: 'stream.start', streamId: 'alice-turn' })).toMatchObject({
      type: 'reply',
    });
    await alice.ok({ type: 'stream.end', streamId: 'alice-turn' });
    await alice.waitFor((m) => m.type === 'stream.result' && m.streamId === 'alice-turn');
    expect(bob.events()).toEqual([]);
  });
});
