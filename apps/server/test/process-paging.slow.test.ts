import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProcessStore } from '../src/processes/process-store.ts';
import { createServer } from '../src/server.ts';
import { openPostgresStore } from '../src/store/sql/open-postgres.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { postProcess, request } from './support/http.ts';
import { freshDatabase } from './support/postgres.ts';
import type { Json } from './support/serve-process.ts';
import { storedProcess } from './support/stored-process.ts';

// Paging 10,000 processes over HTTP while 1,000 more are created through the API returns each of
// the 10,000 exactly once, newest first, and none of another principal's; on SQLite and PostgreSQL.
// The small version runs in the normal suite (process-paging.test.ts).

const dir = mkdtempSync(join(tmpdir(), 'mci-paging-slow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'tools.yaml');
writeFileSync(file, "schemaVersion: '1.0'\ntools: []\n");
const ALICE = 'alice-token-71b3e0d2';
const SEEDED = 10_000;
const CREATED = 1_000;

/** Writes alice's 10,000 processes (pids 1..10,000) and 100 of bob's after them, then closes `store`. */
async function seed(store: ProcessStore): Promise<void> {
  for (let pid = 1; pid <= SEEDED + 100; pid++)
    store.putProcess(storedProcess(pid, { owner: pid <= SEEDED ? 'alice' : 'bob' }));
  await store.committed();
  await store.close();
}

async function pageWhileCreating(db: string): Promise<void> {
  await using server = await createServer({
    port: 0,
    file,
    db,
    logLevel: 'silent',
    limits: { rateLimitPerSecond: 100_000 },
    tokens: [{ token: ALICE, role: 'client', id: 'alice' }],
  });
  // Eight writers create the 1,000 while one reader pages.
  const newPids: number[] = [];
  let started = 0;
  const creating = Promise.all(
    Array.from({ length: 8 }, async () => {
      while (started < CREATED) {
        started++;
        const answer = await postProcess(server.url, { code: 'output(1)', autorun: false }, ALICE);
        expect(answer.status).toBe(201);
        newPids.push(answer.body.pid as number);
      }
    }),
  );
  const seen: number[] = [];
  let createdWhilePaging = 0;
  let cursor: string | undefined;
  do {
    const query = `limit=100${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const page = await request(server.url, 'GET', `/processes?${query}`, undefined, ALICE);
    expect(page.status).toBe(200);
    expect(page.body.processes).toEqual(page.body.items);
    seen.push(...(page.body.items as Json[]).map((item) => item.pid as number));
    cursor = page.body.nextCursor;
    if (cursor !== undefined) createdWhilePaging = newPids.length;
  } while (cursor !== undefined);
  await creating;

  // The creates did overlap the paging, or the test proves nothing.
  expect(createdWhilePaging).toBeGreaterThan(0);
  expect(newPids.filter((pid) => pid <= SEEDED + 100)).toEqual([]);
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen).toEqual([...seen].sort((a, b) => b - a));
  expect(seen.filter((pid) => pid <= SEEDED)).toEqual(Array.from({ length: SEEDED }, (_, i) => SEEDED - i));
  expect(seen.filter((pid) => pid > SEEDED && pid <= SEEDED + 100)).toEqual([]);
  expect(seen.filter((pid) => pid > SEEDED + 100).every((pid) => newPids.includes(pid))).toBe(true);
}

describe('lists that page: 10,000 processes under 1,000 concurrent creates', () => {
  it('on SQLite', { timeout: 300_000 }, async () => {
    const db = join(dir, 'paging.db');
    await seed(await openSqliteStore({ path: db }));
    await pageWhileCreating(db);
  });

  it('on PostgreSQL', { timeout: 300_000 }, async () => {
    await using database = await freshDatabase();
    await seed(await openPostgresStore({ url: database.url }));
    await pageWhileCreating(database.url);
  });
});
