import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/server.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { suiteToolFileDir } from './support/greet-tools.ts';
import { allPages, postProcess, request } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import type { Json } from './support/serve-process.ts';
import { storedProcess } from './support/stored-process.ts';

// GET /processes and process.list page newest first with an opaque cursor: a client paging while
// processes are created sees every earlier process exactly once, never another principal's, and the
// MCI process API's `processes` key holds the page's items. The 10,000-process run of this scenario
// is process-paging.slow.test.ts.

const { dir, file } = suiteToolFileDir('mci-paging-', "schemaVersion: '1.0'\ntools: []\n");
const ALICE = 'alice-token-4c1e9a70';
const BOB = 'bob-token-8e2d5b13';
const OPERATOR = 'operator-token-0f6a2c94';

/** A server on a SQLite database holding `alice` processes for alice (pids 1..alice) and then `bob` for bob. */
async function seededServer(name: string, counts: { alice: number; bob: number }) {
  const db = join(dir, `${name}.db`);
  const store = await openSqliteStore({ path: db });
  for (let pid = 1; pid <= counts.alice + counts.bob; pid++)
    store.putProcess(storedProcess(pid, { owner: pid <= counts.alice ? 'alice' : 'bob' }));
  await store.committed();
  await store.close();
  return createServer({
    port: 0,
    file,
    db,
    logLevel: 'silent',
    // Paging reads stored rows: one sandbox worker, and no compiler checking programs first.
    concurrency: 1,
    check: 'off',
    limits: { rateLimitPerSecond: 100_000 },
    tokens: [
      { token: ALICE, role: 'client', id: 'alice' },
      { token: BOB, role: 'client', id: 'bob' },
      { token: OPERATOR, role: 'operator', id: 'operator' },
    ],
  });
}

/** The pids on every page of `GET /processes` for `token` (`query` added), checking each page's `processes` key. */
async function allPids(url: string, token: string, query: string): Promise<number[]> {
  return (await allPages(url, '/processes', query, token)).flatMap((page) => {
    expect(page.processes).toEqual(page.items);
    return (page.items as Json[]).map((item) => item.pid as number);
  });
}

describe('lists that page: processes', () => {
  it('pages 500 processes while 100 more are created: each earlier one exactly once, newest first, none of bob', async () => {
    await using server = await seededServer('inserts', { alice: 500, bob: 20 });
    let created = 0;
    const creating = Promise.all(
      Array.from({ length: 100 }, async () => {
        const answer = await postProcess(server.url, { code: 'output(1)', autorun: false }, ALICE);
        expect(answer.status).toBe(201);
        created++;
        return answer.body.pid as number;
      }),
    );
    const seen = await allPids(server.url, ALICE, 'limit=7');
    const newPids = await creating;
    expect(created).toBe(100);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    expect(new Set(seen).size).toBe(seen.length);
    const earlier = seen.filter((pid) => pid <= 500);
    expect(earlier).toEqual(Array.from({ length: 500 }, (_, i) => 500 - i));
    expect(seen.filter((pid) => pid > 500).every((pid) => newPids.includes(pid))).toBe(true);

    // Once the writes are over, a second pass sees all 600 of alice's; the operator sees bob's too.
    const all = await allPids(server.url, ALICE, 'limit=100');
    expect(all).toHaveLength(600);
    expect(new Set(all)).toEqual(new Set([...newPids, ...Array.from({ length: 500 }, (_, i) => i + 1)]));
    expect(await allPids(server.url, BOB, 'limit=100')).toEqual(
      Array.from({ length: 20 }, (_, i) => 520 - i),
    );
    expect(await allPids(server.url, OPERATOR, 'limit=100')).toHaveLength(620);
  });

  it('gives 50 by default and keeps the state, status and ref filters across pages', async () => {
    await using server = await seededServer('filters', { alice: 120, bob: 0 });
    const first = await request(server.url, 'GET', '/processes', undefined, ALICE);
    expect(first.body.items).toHaveLength(50);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const refs = Array.from({ length: 12 }, (_, i) =>
      postProcess(server.url, { code: `output(${i})`, ref: 'paged', autorun: false }, ALICE),
    );
    const refPids = (await Promise.all(refs))
      .map((answer) => answer.body.pid as number)
      .sort((a, b) => b - a);
    expect(await allPids(server.url, ALICE, 'limit=5&ref=paged&state=idle&status=null')).toEqual(refPids);
    expect(await allPids(server.url, ALICE, 'limit=5&ref=paged&state=running')).toEqual([]);
  });

  it('refuses a bad limit or cursor with VALIDATION naming it, over HTTP and WebSocket', async () => {
    await using server = await seededServer('hostile', { alice: 3, bob: 3 });
    for (const query of ['limit=0', 'limit=101', 'limit=two', 'limit=1.5', 'limit='])
      expect(await request(server.url, 'GET', `/processes?${query}`, undefined, ALICE)).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION', path: 'limit' },
      });
    const forged = [
      'not-a-cursor',
      Buffer.from('["9"]').toString('base64url'),
      Buffer.from('{"pid":2}').toString('base64url'),
      Buffer.from('[2,1]').toString('base64url'),
      'x'.repeat(2000),
    ];
    for (const cursor of forged)
      expect(
        await request(server.url, 'GET', `/processes?cursor=${encodeURIComponent(cursor)}`, undefined, ALICE),
      ).toMatchObject({ status: 400, body: { code: 'VALIDATION', path: 'cursor' } });

    // Bob's cursor continues bob's list only: alice reading with it sees her own processes below it.
    const bobPage = await request(server.url, 'GET', '/processes?limit=1', undefined, BOB);
    expect(bobPage.body.items).toMatchObject([{ pid: 6 }]);
    const aliceAfter = await request(
      server.url,
      'GET',
      `/processes?cursor=${encodeURIComponent(bobPage.body.nextCursor)}`,
      undefined,
      ALICE,
    );
    expect((aliceAfter.body.items as Json[]).map((item) => item.pid)).toEqual([3, 2, 1]);

    await using ws = await openJsonSocket(server.wsUrl, ALICE);
    const bad = await ws.request({ type: 'process.list', limit: 500 });
    expect(bad).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'limit' });
    const badCursor = await ws.request({ type: 'process.list', cursor: 'nope' });
    expect(badCursor).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'cursor' });
  });

  it('GET /processes/:pid/runs pages the runs newest first, without outputs and logs; 404 for another principal', async () => {
    await using server = await seededServer('runs', { alice: 0, bob: 0 });
    const created = await postProcess(server.url, { code: 'output(1)', block: true }, ALICE);
    const pid = created.body.pid as number;
    for (let i = 0; i < 4; i++)
      expect(
        await request(server.url, 'POST', `/processes/${pid}/signals/run`, { block: true }, ALICE),
      ).toMatchObject({ status: 200, body: { status: 'success' } });
    const runs: Json[] = [];
    let cursor: string | undefined;
    do {
      const query = `limit=2${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await request(server.url, 'GET', `/processes/${pid}/runs?${query}`, undefined, ALICE);
      expect(page.status).toBe(200);
      runs.push(...(page.body.items as Json[]));
      cursor = page.body.nextCursor;
    } while (cursor !== undefined);
    expect(runs.map((run) => run.run)).toEqual([5, 4, 3, 2, 1]);
    expect(runs[0]).toMatchObject({
      run: 5,
      state: 'idle',
      status: 'success',
      durationMs: expect.any(Number),
    });
    expect(runs.some((run) => 'outputs' in run || 'stdout' in run)).toBe(false);
    expect(await request(server.url, 'GET', `/processes/${pid}/runs`, undefined, BOB)).toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND' },
    });
    expect(
      await request(server.url, 'GET', `/processes/${pid}/runs?cursor=zzz`, undefined, ALICE),
    ).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION', path: 'cursor' },
    });
  });

  it('process.list over WebSocket pages the same way, with the processes key', async () => {
    await using server = await seededServer('ws', { alice: 5, bob: 5 });
    await using ws = await openJsonSocket(server.wsUrl, ALICE);
    const first = await ws.request({ type: 'process.list', limit: 3 });
    expect(first.result.items.map((item: Json) => item.pid)).toEqual([5, 4, 3]);
    expect(first.result.processes).toEqual(first.result.items);
    const second = await ws.request({ type: 'process.list', limit: 3, cursor: first.result.nextCursor });
    expect(second.result.items.map((item: Json) => item.pid)).toEqual([2, 1]);
    expect(second.result.nextCursor).toBeUndefined();
  });
});
