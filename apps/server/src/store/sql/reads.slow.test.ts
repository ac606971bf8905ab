import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Insertable, Kysely } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/support/postgres.ts';
import type {
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from '../../processes/process-store.ts';
import { postgresKysely, postgresPool, sqliteKysely } from './connect.ts';
import { POSTGRES, SQLITE } from './engine.ts';
import { readEvents, readLogPage } from './event-reads.ts';
import {
  type ClusterNode,
  readClusterProcesses,
  readExpiredPids,
  readNodes,
  readProcesses,
  readRun,
} from './reads.ts';
import type { Database } from './tables.ts';

// The reads written once for both engines answer what the two sets of reads they replace answered
// (store-reads.ts on SQLite, postgres/pg-reads.ts on PostgreSQL, as of the last commit that changed
// them), on the schema-6 fixtures with rows added: several owners and refs, processes in every state,
// hundreds of outputs and logs for byte windows, and (PostgreSQL) a cluster's event log.

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/schema-6/', import.meta.url));

// ------------------------------------------------------------------------------------ old reads

/** The last commit that changed the reads this file replaces (the SQL store drops them from the tree). */
const OLD_READS_COMMIT = 'da30f4ff53d46c73475252be92c7c73883adb7a8';
const HERE = dirname(fileURLToPath(import.meta.url));

type Quota = { maxProcesses: number; maxBytes: number };
type OldRun = { run: StoredRun; outputBytes: number } | undefined;
type SqliteRead = (text: string) => ReturnType<DatabaseSync['prepare']>;
type PgRead = (text: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;
type PgRows = Array<Record<string, unknown>>;

/** store-reads.ts: the SQLite store's reads. */
interface OldSqliteReads {
  readProcesses(read: SqliteRead, filter: StoredProcessFilter): StoredProcess[];
  readRun(read: SqliteRead, pid: number, run: number): OldRun;
  readEvents(read: SqliteRead, since: number, filter: StoredEventFilter): StoredEvent[];
  readExpiredPids(read: SqliteRead, cutoff: number, quota: Quota, limit: number): number[];
}

/** postgres/pg-reads.ts: the PostgreSQL store's reads, and the statement of the cluster's fan-in. */
interface OldPgReads {
  readPgProcesses(read: PgRead, filter: StoredProcessFilter): Promise<StoredProcess[]>;
  readPgRun(read: PgRead, pid: number, run: number): Promise<OldRun>;
  readPgEvents(read: PgRead, since: number, filter: StoredEventFilter): Promise<StoredEvent[]>;
  readPgExpiredPids(read: PgRead, cutoff: number, quota: Quota, limit: number): Promise<number[]>;
  readPgNodes(read: PgRead): Promise<ClusterNode[]>;
  readPgClusterProcesses(read: PgRead): Promise<Array<{ node: string; state: string; count: number }>>;
  pgEventsQuery(
    since: number,
    filter: StoredEventFilter,
    options?: { positions?: boolean; limit?: number },
  ): { sql: string; params: unknown[] };
  decodePgEvents(rows: PgRows): StoredEvent[];
}

/**
 * An old read module, `path` under src/store at {@link OLD_READS_COMMIT}, written into `dir` and
 * imported; its one value import, row-codec.ts, is today's (its type imports are erased).
 */
async function oldReads<T>(path: string): Promise<T> {
  const source = execFileSync('git', ['show', `${OLD_READS_COMMIT}:./${path}`], {
    cwd: join(HERE, '..'),
    encoding: 'utf8',
  }).replace(/from '[./]+row-codec\.ts'/, `from '${pathToFileURL(join(HERE, '../row-codec.ts')).href}'`);
  const file = join(dir, path.replaceAll('/', '-'));
  writeFileSync(file, source);
  return (await import(pathToFileURL(file).href)) as T;
}

/** A deterministic pseudo-random sequence in [0, 1) (mulberry32). */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const OWNERS = ['carol', 'dave', 'erin', 'alice'];
const REFS = ['r-a', 'r-b', null];
const STATES = ['idle', 'idle', 'idle', 'queued', 'running'] as const;
/** Epoch ms of the added processes' last changes (before and after the fixture's). */
const T0 = 1_790_000_000_000;
const FIRST_PID = 100;
const FIRST_SEQ = 1000;

/** Rows added to both fixtures: the same in each engine. */
function extraRows() {
  const next = random(6);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
  const processes: Array<Insertable<Database['processes']>> = [];
  const runs: Array<Insertable<Database['runs']>> = [];
  const outputs: Array<Insertable<Database['outputs']>> = [];
  const logs: Array<Insertable<Database['logs']>> = [];
  const events: Array<Insertable<Database['events']>> = [];
  let seq = FIRST_SEQ;
  for (let i = 0; i < 30; i++) {
    const pid = FIRST_PID + i;
    const owner = OWNERS[i % OWNERS.length]!;
    const ref = pick(REFS);
    const state = pick(STATES);
    const streamId = i % 5 === 0 ? 's-1' : null;
    const nRuns = 1 + (i % 3);
    let bytes = 0;
    const route = { owner, pid, ref, stream_id: streamId };
    const body = (event: Record<string, unknown>) =>
      JSON.stringify({ seq, pid, ...(ref && { ref }), ...event });
    events.push({
      ...route,
      seq,
      at: T0 + seq,
      body: body({ type: 'process', state: 'queued', status: null }),
    });
    seq++;
    for (let run = 1; run <= nRuns; run++) {
      const last = run === nRuns;
      runs.push({
        pid,
        run,
        state: last && state !== 'idle' ? state : 'idle',
        status: last && state !== 'idle' ? null : pick(['success', 'failed', 'timeout']),
        queued_at: new Date(T0 + seq).toISOString(),
        started_at: next() < 0.8 ? new Date(T0 + seq + 5).toISOString() : null,
        ended_at: last && state !== 'idle' ? null : new Date(T0 + seq + 50).toISOString(),
        duration_ms: last && state !== 'idle' ? null : Math.round(next() * 1e4) / 8,
        error: next() < 0.2 ? JSON.stringify({ name: 'Error', message: `boom ${pid}` }) : null,
        truncated: next() < 0.1 ? 1 : next() < 0.1 ? 0 : null,
      });
      const count = Math.floor(next() * (i % 7 === 0 ? 120 : 12));
      for (let k = 0; k < count; k++) {
        if (next() < 0.6) {
          const value =
            k % 11 === 0 ? { text: 'x'.repeat(Math.floor(next() * 400)) } : Math.round(next() * 1e6);
          const encoded = Buffer.from(JSON.stringify(value));
          outputs.push({ seq, pid, run, value: encoded });
          bytes += encoded.byteLength;
        } else {
          // ASCII text for carol, so the old SQLite count (UTF-16 code units) agrees with bytes.
          const text =
            owner === 'carol' || k % 5
              ? `line ${k} ${'.'.repeat(Math.floor(next() * 60))}\n`
              : `naïve ✓ ${k}\n`;
          logs.push({ seq, pid, run, stream: next() < 0.8 ? 'stdout' : 'stderr', text });
          bytes += Buffer.byteLength(text);
        }
        seq++;
      }
      events.push({
        ...route,
        seq,
        at: T0 + seq,
        body: body({ type: 'process', state: 'idle', status: 'success' }),
      });
      seq++;
    }
    // Unowned events (intents, stream results) between the processes' own.
    if (i % 4 === 0) {
      events.push({
        owner,
        pid: null,
        ref,
        stream_id: 's-1',
        seq,
        at: T0 + seq,
        body: JSON.stringify({
          seq,
          type: 'stream.result',
          streamId: 's-1',
          ...(ref && { ref }),
          processes: [],
        }),
      });
      seq++;
    }
    processes.push({
      pid,
      owner,
      code: `return ${i}`,
      lang: 'ts',
      ref,
      created_at: new Date(T0 + i).toISOString(),
      timeout_ms: 30_000,
      memory_limit_mb: 128,
      metadata: streamId ? JSON.stringify({ streamId }) : null,
      stream_id: streamId,
      state,
      status: state === 'idle' ? pick(['success', 'failed', null]) : null,
      runs: nRuns,
      // Pairs of processes share a time, so order within a time falls to the pid.
      idle_since: T0 + Math.floor(i / 2) * 1000,
      stored_bytes: bytes,
      node: state === 'idle' ? pick(['n1', null]) : pick(['n1', 'n2']),
    });
  }
  return { processes, runs, outputs, logs, events, lastSeq: seq - 1 };
}

const extra = extraRows();

/** Inserts the extra rows, a hundred at a time. */
async function insertExtra(db: Kysely<Database>) {
  for (const table of ['processes', 'runs', 'outputs', 'logs', 'events'] as const) {
    const rows = extra[table];
    for (let i = 0; i < rows.length; i += 100)
      await db
        .insertInto(table)
        .values(rows.slice(i, i + 100) as never)
        .execute();
  }
}

// ------------------------------------------------------------------------------------------ setup

const dir = mkdtempSync(join(tmpdir(), 'mci-sql-reads-'));
let sqlite: DatabaseSync;
let sqliteDb: Kysely<Database>;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let postgresDb: Kysely<Database>;
let oldSqlite: OldSqliteReads;
let oldPg: OldPgReads;

/** The old SQLite reads' statement source. */
const oldSqliteRead = (text: string) => sqlite.prepare(text);
/** The old PostgreSQL reads' query function, `?` placeholders numbered `$n` as the store numbered them. */
const oldPgRead = async (text: string, params: unknown[]) => {
  let n = 0;
  return (
    await pool.query(
      text.replace(/\?/g, () => `$${++n}`),
      params,
    )
  ).rows as PgRows;
};

beforeAll(async () => {
  oldSqlite = await oldReads<OldSqliteReads>('store-reads.ts');
  oldPg = await oldReads<OldPgReads>('postgres/pg-reads.ts');
  const path = join(dir, 'mci.db');
  copyFileSync(join(FIXTURES, 'mci.db'), path);
  sqlite = new DatabaseSync(path);
  sqliteDb = sqliteKysely(sqlite);
  database = await freshDatabase();
  execFileSync('psql', [
    '-v',
    'ON_ERROR_STOP=1',
    '-q',
    '-d',
    database.url,
    '-f',
    join(FIXTURES, 'postgres.sql'),
  ]);
  pool = postgresPool(database.url);
  postgresDb = postgresKysely(pool);
  await insertExtra(sqliteDb);
  await insertExtra(postgresDb);
});

afterAll(async () => {
  await sqliteDb?.destroy();
  sqlite?.close();
  await postgresDb?.destroy();
  await pool?.end();
  await database?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `check` on every item at once (the PostgreSQL pool answers several queries at a time). */
const each = async <T>(items: readonly T[], check: (item: T) => Promise<void>) => {
  await Promise.all(items.map(check));
};

/** Plain data (no Buffers or prototypes), as a reader would send it. */
const plain = <T>(value: T): T => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

// ------------------------------------------------------------------------------------ processes

const PROCESS_FILTERS: StoredProcessFilter[] = [
  {},
  { owner: 'alice' },
  { owner: 'carol' },
  { owner: 'nobody' },
  { state: 'idle' },
  { state: 'running' },
  { status: null },
  { status: 'success' },
  { owner: 'bob', status: null },
  { ref: 'msg-1' },
  { ref: 'r-a' },
  { owner: 'dave', ref: 'r-b' },
  { node: 'n1' },
  { node: 'n2', state: 'queued' },
  { streamId: 's-1' },
  { streamId: 'str-alpha' },
  { owner: 'erin', state: 'idle', status: 'failed', ref: 'r-a', node: 'n1', streamId: 's-1' },
];

describe('readProcesses', () => {
  it.each(PROCESS_FILTERS.map((filter) => [JSON.stringify(filter), filter] as const))(
    'answers %s as both old reads did',
    async (_, filter) => {
      const fromSqlite = await readProcesses(sqliteDb, filter);
      expect(fromSqlite).toEqual(oldSqlite.readProcesses(oldSqliteRead, filter));
      const fromPostgres = await readProcesses(postgresDb, filter);
      expect(fromPostgres).toEqual(await oldPg.readPgProcesses(oldPgRead, filter));
      expect(fromSqlite.map((p) => p.pid)).toEqual(fromPostgres.map((p) => p.pid));
    },
  );
});

// ----------------------------------------------------------------------------------------- runs

describe('readRun', () => {
  it('reads every run (and none of an unknown one) as both old reads did', async () => {
    const all = await readProcesses(sqliteDb, {});
    let compared = 0;
    const keys = [...all, { pid: 999, runs: 1 }].flatMap(({ pid, runs }) =>
      Array.from({ length: runs + 2 }, (_, run) => [pid, run] as const),
    );
    await each(keys, async ([pid, run]) => {
      const fromSqlite = await readRun(sqliteDb, pid, run);
      expect(fromSqlite).toEqual(oldSqlite.readRun(oldSqliteRead, pid, run));
      const fromPostgres = await readRun(postgresDb, pid, run);
      expect(fromPostgres).toEqual(await oldPg.readPgRun(oldPgRead, pid, run));
      expect(plain(fromSqlite)).toEqual(plain(fromPostgres));
      if (fromSqlite) compared++;
    });
    expect(compared).toBe(11 + extra.runs.length);
  });
});

// --------------------------------------------------------------------------------------- events

const SINCES = [0, 10, 50, 93, FIRST_SEQ, FIRST_SEQ + 400, extra.lastSeq];
const EVENT_FILTERS: StoredEventFilter[] = [
  {},
  { owner: 'alice' },
  { owner: 'carol' },
  { owner: 'bob', pid: 3 },
  { pid: 1 },
  { pid: FIRST_PID },
  { pid: FIRST_PID + 7 },
  { ref: 'msg-1' },
  { ref: 'r-a' },
  { owner: 'dave', ref: 'r-b' },
  { through: 60 },
  { through: FIRST_SEQ + 500 },
  { owner: 'carol', through: FIRST_SEQ + 900 },
  { pid: FIRST_PID + 14, through: FIRST_SEQ + 700 },
];
const MAX_BYTES = [1, 40, 300, 2000, 20_000, 1e9];

const seqs = (events: StoredEvent[]) => events.map((stored) => stored.event.seq);

describe('readEvents', () => {
  it('replays every since and filter as both old reads did', async () => {
    for (const since of SINCES)
      await each(EVENT_FILTERS, async (filter) => {
        const fromSqlite = await readEvents(sqliteDb, SQLITE, since, filter);
        expect(fromSqlite).toEqual(oldSqlite.readEvents(oldSqliteRead, since, filter));
        const fromPostgres = await readEvents(postgresDb, POSTGRES, since, filter);
        expect(fromPostgres).toEqual(await oldPg.readPgEvents(oldPgRead, since, filter));
        expect(plain(fromSqlite)).toEqual(plain(fromPostgres));
      });
  });

  it.each(SINCES)(
    'ends at maxBytes as the old PostgreSQL read did, in both engines (since %i)',
    async (since) => {
      let cut = 0;
      for (const filter of EVENT_FILTERS) {
        const whole = await readEvents(sqliteDb, SQLITE, since, filter);
        for (const maxBytes of MAX_BYTES) {
          const windowed = { ...filter, maxBytes };
          const fromPostgres = await readEvents(postgresDb, POSTGRES, since, windowed);
          expect(fromPostgres).toEqual(await oldPg.readPgEvents(oldPgRead, since, windowed));
          // The same rows hold the same bytes in SQLite: the same events end the window.
          const fromSqlite = await readEvents(sqliteDb, SQLITE, since, windowed);
          expect(plain(fromSqlite)).toEqual(plain(fromPostgres));
          if (fromSqlite.length < whole.length) cut++;
        }
      }
      if (since < extra.lastSeq) expect(cut).toBeGreaterThan(10);
    },
  );

  it('ends at maxBytes as the old SQLite read did where text is ASCII (it counted UTF-16 code units)', async () => {
    for (const since of SINCES)
      for (const maxBytes of MAX_BYTES) {
        const filter = { owner: 'carol', maxBytes };
        const fromSqlite = await readEvents(sqliteDb, SQLITE, since, filter);
        expect(fromSqlite).toEqual(oldSqlite.readEvents(oldSqliteRead, since, filter));
      }
  });

  it('counts text as UTF-8 bytes and returns the first event whatever maxBytes', async () => {
    // Log seqs 26 and 27 of pid 1: "Grüße aus Zürich 🌍\n" is 25 bytes, 20 UTF-16 code units.
    for (const [db, engine] of [
      [sqliteDb, SQLITE],
      [postgresDb, POSTGRES],
    ] as const) {
      expect(seqs(await readEvents(db, engine, 25, { pid: 1, maxBytes: 25 }))).toEqual([26]);
      expect(seqs(await readEvents(db, engine, 25, { pid: 1, maxBytes: 26 }))).toEqual([26, 27]);
      expect(seqs(await readEvents(db, engine, 25, { pid: 1, through: 27, maxBytes: 0 }))).toEqual([26]);
      expect(await readEvents(db, engine, extra.lastSeq, { maxBytes: 10 })).toEqual([]);
    }
  });

  it('stops at limit without positions as the old PostgreSQL statement did', async () => {
    for (const since of SINCES)
      for (const filter of EVENT_FILTERS.slice(0, 6))
        for (const limit of [1, 5, 100]) {
          const { sql, params } = oldPg.pgEventsQuery(since, filter, { limit });
          const old = oldPg.decodePgEvents((await pool.query(sql, params)).rows);
          expect(await readEvents(postgresDb, POSTGRES, since, filter, { limit })).toEqual(old);
          expect(plain(await readEvents(sqliteDb, SQLITE, since, filter, { limit }))).toEqual(plain(old));
        }
  });
});

// -------------------------------------------------------------------------------- expired pids

describe('readExpiredPids', () => {
  const FIXTURE_TIME = 1_795_834_701_276;
  const CUTOFFS = [0, T0 + 4_500, T0 + 20_000, FIXTURE_TIME, 1_900_000_000_000];
  const QUOTAS = [
    { maxProcesses: 1, maxBytes: Number.POSITIVE_INFINITY },
    { maxProcesses: 3, maxBytes: Number.POSITIVE_INFINITY },
    { maxProcesses: 100_000, maxBytes: Number.POSITIVE_INFINITY },
    { maxProcesses: 100_000, maxBytes: 0 },
    { maxProcesses: 100_000, maxBytes: 500 },
    { maxProcesses: 100_000, maxBytes: 5_000 },
    { maxProcesses: 4, maxBytes: 2_000 },
    { maxProcesses: 2, maxBytes: 100 },
  ];

  it('selects what both old reads selected, for every policy', async () => {
    let selected = 0;
    for (const cutoff of CUTOFFS)
      for (const quota of QUOTAS)
        for (const limit of [1, 3, 10, 500]) {
          const fromSqlite = await readExpiredPids(sqliteDb, cutoff, quota, limit);
          expect(fromSqlite).toEqual(oldSqlite.readExpiredPids(oldSqliteRead, cutoff, quota, limit));
          const fromPostgres = await readExpiredPids(postgresDb, cutoff, quota, limit);
          expect(fromPostgres).toEqual(await oldPg.readPgExpiredPids(oldPgRead, cutoff, quota, limit));
          selected += fromSqlite.length + fromPostgres.length;
        }
    expect(selected).toBeGreaterThan(1000);
  });
});

// ---------------------------------------------------------------------------- cluster (PostgreSQL)

describe('a cluster (PostgreSQL)', () => {
  /** The log's positions: every stored seq once, in an order unlike the seqs, by two nodes. */
  let lastPos = 0;

  beforeAll(async () => {
    const next = random(7);
    const keys = (
      await pool.query(
        `SELECT seq FROM events UNION ALL SELECT seq FROM outputs UNION ALL SELECT seq FROM logs`,
      )
    ).rows.map((row) => Number(row.seq));
    // Commit order: the seqs shuffled within blocks of 20, as nodes committing interleaved batches.
    keys.sort((a, b) => a - b);
    const order: number[] = [];
    for (let i = 0; i < keys.length; i += 20) {
      const block = keys.slice(i, i + 20);
      for (let j = block.length - 1; j > 0; j--) {
        const k = Math.floor(next() * (j + 1));
        [block[j], block[k]] = [block[k]!, block[j]!];
      }
      order.push(...block);
    }
    // A position whose event is gone (its process deleted after the log row was read).
    order.splice(300, 0, 999_999);
    const rows = order.map((seq, i) => ({ pos: i + 1, seq, node: next() < 0.5 ? 'n1' : 'n2' }));
    for (let i = 0; i < rows.length; i += 500)
      await postgresDb
        .insertInto('event_log')
        .values(rows.slice(i, i + 500))
        .execute();
    lastPos = rows.length;
    await postgresDb
      .insertInto('nodes')
      .values([
        {
          name: 'n1',
          started_at: new Date(),
          renewed_at: new Date(),
          lease_until: new Date(Date.now() + 3_600_000),
          stopped_at: null,
          stopped_by: null,
        },
        {
          name: 'n2',
          started_at: '2026-11-28 01:00:00.123456+00',
          renewed_at: '2026-11-28 01:00:01.57+00',
          lease_until: '2026-11-28 01:00:02.999999+00',
          stopped_at: null,
          stopped_by: null,
        },
      ])
      .execute();
  });

  const oldPositions = async (since: number, filter: StoredEventFilter, limit?: number) => {
    const { sql, params } = oldPg.pgEventsQuery(since, filter, {
      positions: true,
      ...(limit !== undefined && { limit }),
    });
    return (await pool.query(sql, params)).rows as Array<Record<string, unknown>>;
  };

  it.each([0, 1, 99, 300, 640, 1300])(
    'replays by position as the old statement did, with and without a page limit (since %i)',
    async (since) => {
      let nonEmpty = 0;
      await each([...EVENT_FILTERS, { through: 350 }, { owner: 'carol', through: 800 }], async (filter) => {
        for (const limit of [undefined, 1, 7, 100, 5000])
          for (const maxBytes of [undefined, 300, 5000]) {
            const windowed = { ...filter, ...(maxBytes !== undefined && { maxBytes }) };
            const old = oldPg.decodePgEvents(await oldPositions(since, windowed, limit));
            const found = await readEvents(postgresDb, POSTGRES, since, windowed, {
              positions: true,
              ...(limit !== undefined && { limit }),
            });
            expect(found).toEqual(old);
            if (found.length > 0) nonEmpty++;
          }
      });
      if (since < lastPos) expect(nonEmpty).toBeGreaterThan(40);
    },
  );

  it('pages the whole log for the fan-in as the worker read it', async () => {
    const whole = oldPg.decodePgEvents(await oldPositions(0, {}));
    for (const limit of [33, 1000]) {
      let since = 0;
      const events: StoredEvent[] = [];
      for (;;) {
        const rows = await oldPositions(since, {}, limit);
        const page = await readLogPage(postgresDb, since, limit);
        expect(page.events).toEqual(oldPg.decodePgEvents(rows));
        expect(page.nodes).toEqual(rows.map((row) => row.node));
        expect(page.lastPos).toBe(rows.length > 0 ? Number(rows.at(-1)!.seq) : since);
        events.push(...page.events);
        if (!page.full) break;
        since = page.lastPos;
      }
      expect(events).toEqual(whole);
      expect(lastPos - since).toBeLessThanOrEqual(limit);
    }
  });

  it('passes over a position whose event is gone (the worker stopped before it)', async () => {
    // Position 301 holds seq 999999, which no table has.
    expect(await oldPositions(300, {}, 1)).toEqual([]);
    expect(await readLogPage(postgresDb, 300, 1)).toEqual({
      events: [],
      nodes: [],
      lastPos: 301,
      full: true,
    });
    const next = await readLogPage(postgresDb, 301, 1);
    expect(next).toMatchObject({ lastPos: 302, full: true });
    expect(seqs(next.events)).toEqual([302]);
    const across = await readLogPage(postgresDb, 298, 5);
    expect(seqs(across.events)).toEqual([299, 300, 302, 303]);
    expect(across).toMatchObject({ lastPos: 303, full: true });
  });

  it('reads the nodes and the processes they run as the old reads did', async () => {
    const nodes = await readNodes(postgresDb);
    expect(nodes).toEqual(await oldPg.readPgNodes(oldPgRead));
    expect(nodes.map((node) => [node.name, node.live])).toEqual([
      ['n1', true],
      ['n2', false],
      ['schema-6-fixture', false],
    ]);
    expect(nodes[1]).toMatchObject({
      startedAt: '2026-11-28T01:00:00.123Z',
      renewedAt: '2026-11-28T01:00:01.570Z',
    });
    const processes = await readClusterProcesses(postgresDb);
    expect(processes).toEqual(await oldPg.readPgClusterProcesses(oldPgRead));
    expect(processes.length).toBeGreaterThan(1);
    // The same statement in SQLite, on the same rows.
    expect(await readClusterProcesses(sqliteDb)).toEqual(processes);
  });
});
