// Retention's sweep over a large store: one `expiredProcesses` selection (age, count and byte quota)
// over 2,000 processes of two principals with 250 outputs and 250 log lines each (1,000,000 output and
// log rows), with the byte quota read from `processes.stored_bytes` (the stores' rule) and, as the
// baseline, summed from every output and log row at each sweep. Both read the same database through
// the same connection, in alternating rounds: an SQLite file filled through the store (read through
// one read-only connection), and a PostgreSQL database filled as a version 3 database and migrated by
// the store (the migration's backfill is timed too; both rules read through the store's pool).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type Kysely, sql } from 'kysely';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { postgresKysely, postgresPool, sqliteKysely } from '../src/store/sql/connect.ts';
import { type Engine, POSTGRES, SQLITE } from '../src/store/sql/engine.ts';
import { MIGRATIONS, migrate } from '../src/store/sql/migrations.ts';
import { openPostgresStore } from '../src/store/sql/open-postgres.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { readExpiredPids } from '../src/store/sql/reads.ts';
import type { Database } from '../src/store/sql/tables.ts';
import { adminQueryOn, freshDatabase } from '../test/support/postgres.ts';

const PROCESSES = 2000;
const ROWS_PER_KIND = 250;
const ROUNDS = 7;
/** Processes idle for longer than this expire by age (none of the bench's do). */
const MAX_AGE_MS = 7 * 86_400_000;

type Quota = { maxProcesses: number; maxBytes: number };

/**
 * The baseline: the byte rule measured by summing the sizes of every `outputs` and `logs` row of the
 * principals (the age and count rules are the store's), one statement for both engines.
 */
async function expiredSummingRows(
  db: Kysely<Database>,
  engine: Engine,
  cutoff: number,
  quota: Quota,
  limit: number,
): Promise<number[]> {
  const chosen = await readExpiredPids(db, cutoff, { ...quota, maxBytes: Number.POSITIVE_INFINITY }, limit);
  if (chosen.length >= limit) return chosen;
  const { rows } = await sql<{ pid: number }>`
    WITH sizes AS (
      SELECT pid, sum(n) AS bytes FROM (
        SELECT pid, ${engine.byteLength(sql.ref('value'))} AS n FROM outputs
        UNION ALL SELECT pid, ${engine.byteLength(sql.ref('text'))} FROM logs
      ) data GROUP BY pid
    ),
    over AS (
      SELECT p.owner, sum(coalesce(s.bytes, 0)) - ${quota.maxBytes} AS excess
        FROM processes p LEFT JOIN sizes s ON s.pid = p.pid
       WHERE NOT (p.idle_since < ${cutoff} AND p.state = 'idle')
       GROUP BY p.owner HAVING sum(coalesce(s.bytes, 0)) - ${quota.maxBytes} > 0
    )
    SELECT pid FROM (
      SELECT p.pid, p.idle_since, o.excess,
             coalesce(sum(coalesce(s.bytes, 0)) OVER (
               PARTITION BY p.owner ORDER BY p.idle_since, p.pid
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM processes p JOIN over o ON o.owner = p.owner LEFT JOIN sizes s ON s.pid = p.pid
       WHERE p.state = 'idle' AND p.idle_since >= ${cutoff}
    ) ranked WHERE before < excess ORDER BY idle_since, pid LIMIT ${limit - chosen.length}`.execute(db);
  return [...new Set([...chosen, ...rows.map((row) => Number(row.pid))])].slice(0, limit);
}

/**
 * Makes the database at `url` a version 3 one (no `stored_bytes`) holding the bench's processes,
 * outputs and logs.
 */
async function pgVersion3(url: string, now: number): Promise<void> {
  const pool = postgresPool(url);
  const db = postgresKysely(pool);
  try {
    await migrate(db, POSTGRES, url, MIGRATIONS.slice(0, 3));
  } finally {
    await db.destroy();
    await pool.end();
  }
  const half = PROCESSES * ROWS_PER_KIND;
  await adminQueryOn(
    url,
    [
      `INSERT INTO processes (pid, owner, code, lang, created_at, timeout_ms, memory_limit_mb, state, status, runs, idle_since)
         SELECT g, CASE WHEN g % 2 = 0 THEN 'alice' ELSE 'bob' END, 'output(' || g || ')', 'ts', '2026-01-01T00:00:00.000Z',
                1000, 64, 'idle', 'success', 1, ${now} FROM generate_series(1, ${PROCESSES}) g`,
      `INSERT INTO runs (pid, run, state, status) SELECT g, 1, 'idle', 'success' FROM generate_series(1, ${PROCESSES}) g`,
      `INSERT INTO outputs (seq, pid, run, value)
         SELECT 2 * g - 1, (g - 1) / ${ROWS_PER_KIND} + 1, 1, convert_to('"output ' || lpad(g::text, 12, '0') || '"', 'UTF8')
           FROM generate_series(1, ${half}) g`,
      `INSERT INTO logs (seq, pid, run, stream, text)
         SELECT 2 * g, (g - 1) / ${ROWS_PER_KIND} + 1, 1, 'stdout', 'log line ' || lpad(g::text, 10, '0') || chr(10)
           FROM generate_series(1, ${half}) g`,
      `UPDATE counters SET value = ${2 * half} WHERE name = 'seq'`,
      `UPDATE counters SET value = ${PROCESSES} WHERE name = 'pid'`,
      'ANALYZE',
    ].join(';\n'),
  );
}

type Rule = () => Promise<number[]>;

/** Median ms of each rule over {@link ROUNDS} alternating rounds, after checking they select alike. */
async function race(label: string, rows: number, rules: { counted: Rule; summed: Rule }) {
  const expected = await rules.summed();
  if (JSON.stringify(await rules.counted()) !== JSON.stringify(expected))
    throw new Error(`the two byte rules select different processes (${label})`);
  const times = { counted: [] as number[], summed: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0
      ? (['counted', 'summed'] as const)
      : (['summed', 'counted'] as const)) {
      const begin = performance.now();
      await rules[name]();
      times[name].push(performance.now() - begin);
    }
  }
  const summed = percentile(times.summed, 50);
  const name = `retention sweep, ${label}, ${rows} output+log rows`;
  return [
    { name: `${name}: rows summed (median of ${ROUNDS})`, value: summed, unit: 'ms' },
    compared(
      `${name}: stored_bytes (median of ${ROUNDS}, ${expected.length} selected)`,
      percentile(times.counted, 50),
      'ms',
      { name: 'rows summed', value: summed },
    ),
  ];
}

/** The default quota (nothing is over it, yet every byte is measured) and one both principals are over. */
const QUOTAS = { 'quota not reached': 1024 ** 3, 'quota of 1 MB reached': 1_000_000 };
const LIMIT = 500;

/** Fills the store at `path` through its API: outputs and logs of 20 characters. */
async function fill(path: string): Promise<number> {
  const store = await openSqliteStore({ path });
  let seq = 0;
  for (let pid = 1; pid <= PROCESSES; pid++) {
    store.putProcess({
      pid,
      owner: pid % 2 === 0 ? 'alice' : 'bob',
      code: `output(${pid})`,
      lang: 'ts',
      createdAt: new Date().toISOString(),
      timeoutMs: 1000,
      memoryLimitMb: 64,
      state: 'idle',
      status: 'success',
      runs: 1,
    });
    store.insertRun(pid, 1, { state: 'idle', status: 'success' });
    for (let i = 0; i < ROWS_PER_KIND; i++) {
      store.appendOutput(pid, 1, ++seq, `output ${String(i).padStart(12, '0')}`);
      store.appendLog(pid, 1, ++seq, 'stdout', `log line ${String(i).padStart(10, '0')}\n`);
    }
    // One batch per process, committed before the next (the store refuses writes far behind).
    await store.committed();
  }
  await store.close();
  return seq;
}

async function sqliteSweeps(dir: string): Promise<BenchResult[]> {
  const path = join(dir, 'mci.db');
  const rows = await fill(path);
  const file = new DatabaseSync(path, { readOnly: true });
  const db = sqliteKysely(file);
  const cutoff = Date.now() - MAX_AGE_MS;
  try {
    const results: BenchResult[] = [];
    for (const [label, maxBytes] of Object.entries(QUOTAS)) {
      const quota = { maxProcesses: 100_000, maxBytes };
      results.push(
        ...(await race(`SQLite, ${label}`, rows, {
          counted: () => readExpiredPids(db, cutoff, quota, LIMIT),
          summed: () => expiredSummingRows(db, SQLITE, cutoff, quota, LIMIT),
        })),
      );
    }
    return results;
  } finally {
    await db.destroy();
    file.close();
  }
}

async function postgresSweeps(): Promise<BenchResult[]> {
  await using database = await freshDatabase();
  const now = Date.now();
  await pgVersion3(database.url, now);
  const begin = performance.now();
  const store = await openPostgresStore({ url: database.url, timeoutMs: 300_000 });
  const migrateMs = performance.now() - begin;
  try {
    const db = store.tables.db;
    const { bytes } = await db
      .selectFrom('processes')
      .select((eb) => eb.fn.sum<number>('stored_bytes').as('bytes'))
      .executeTakeFirstOrThrow();
    const rows = 2 * PROCESSES * ROWS_PER_KIND;
    const cutoff = now - MAX_AGE_MS;
    const results: BenchResult[] = [
      {
        name: `Postgres migration to version 4 (stored_bytes of ${PROCESSES} processes, ${rows} rows, ${bytes} bytes)`,
        value: migrateMs,
        unit: 'ms',
      },
    ];
    for (const [label, maxBytes] of Object.entries(QUOTAS)) {
      const quota = { maxProcesses: 100_000, maxBytes };
      results.push(
        ...(await race(`Postgres, ${label}`, rows, {
          counted: () => store.expiredProcesses({ ...quota, maxAgeMs: MAX_AGE_MS, limit: LIMIT, now }),
          summed: () => expiredSummingRows(db, POSTGRES, cutoff, quota, LIMIT),
        })),
      );
    }
    return results;
  } finally {
    await store.close();
  }
}

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-retention-bench-'));
  try {
    return [...(await sqliteSweeps(dir)), ...(await postgresSweeps())];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
