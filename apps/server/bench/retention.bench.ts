// Retention's sweep over a large store: one `expiredProcesses` selection (age, count and byte quota)
// over 2,000 processes of two principals with 250 outputs and 250 log lines each (1,000,000 output and
// log rows), with the byte quota read from `processes.stored_bytes` (the stores' rule) and, as the
// baseline, summed from every output and log row at each sweep. Both run on one connection of the same
// database, in alternating rounds: an SQLite file filled through the store, and a PostgreSQL database
// filled as a version 3 database and migrated by the store (the migration's backfill is timed too).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { openPostgresStore } from '../src/store/postgres/open-postgres-store.ts';
import { PG_MIGRATIONS } from '../src/store/postgres/pg-migrations.ts';
import { readPgExpiredPids } from '../src/store/postgres/pg-reads.ts';
import { openSqliteStore } from '../src/store/sqlite-store.ts';
import { readExpiredPids } from '../src/store/store-reads.ts';
import { adminQueryOn, freshDatabase } from '../test/support/postgres.ts';

const PROCESSES = 2000;
const ROWS_PER_KIND = 250;
const ROUNDS = 7;

type Read = (sql: string) => StatementSync;
type PgRead = Parameters<typeof readPgExpiredPids>[0];
type Quota = { maxProcesses: number; maxBytes: number };

/**
 * The baseline: the byte rule measured by summing the sizes of every `outputs` and `logs` row of the
 * principals (the age and count rules are the store's).
 */
function expiredSummingRows(read: Read, cutoff: number, quota: Quota, limit: number): number[] {
  const chosen = readExpiredPids(read, cutoff, { ...quota, maxBytes: Number.POSITIVE_INFINITY }, limit);
  if (chosen.length >= limit) return chosen;
  const overBytes = read(
    `WITH sizes AS (
       SELECT pid, sum(n) AS bytes FROM (
         SELECT pid, length(value) AS n FROM outputs
         UNION ALL SELECT pid, length(CAST(text AS BLOB)) FROM logs
       ) GROUP BY pid
     ),
     over AS (
       SELECT p.owner, sum(coalesce(s.bytes, 0)) - ? AS excess
         FROM processes p LEFT JOIN sizes s ON s.pid = p.pid
        WHERE NOT (p.idle_since < ? AND p.state = 'idle')
        GROUP BY p.owner HAVING excess > 0
     )
     SELECT pid FROM (
       SELECT p.pid, p.idle_since, o.excess,
              coalesce(sum(coalesce(s.bytes, 0)) OVER (
                PARTITION BY p.owner ORDER BY p.idle_since, p.pid
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM processes p JOIN over o ON o.owner = p.owner LEFT JOIN sizes s ON s.pid = p.pid
        WHERE p.state = 'idle' AND p.idle_since >= ?
     ) WHERE before < excess ORDER BY idle_since, pid LIMIT ?`,
  )
    .all(quota.maxBytes, cutoff, cutoff, limit - chosen.length)
    .map((row) => row.pid as number);
  return [...new Set([...chosen, ...overBytes])].slice(0, limit);
}

/** The baseline on Postgres (as {@link expiredSummingRows}). */
async function expiredSummingPgRows(
  read: PgRead,
  cutoff: number,
  quota: Quota,
  limit: number,
): Promise<number[]> {
  const chosen = await readPgExpiredPids(
    read,
    cutoff,
    { ...quota, maxBytes: Number.POSITIVE_INFINITY },
    limit,
  );
  if (chosen.length >= limit) return chosen;
  const overBytes = (
    await read(
      `WITH sizes AS (
       SELECT pid, sum(n) AS bytes FROM (
         SELECT pid, octet_length(value) AS n FROM outputs
         UNION ALL SELECT pid, octet_length(text) FROM logs
       ) data GROUP BY pid
     ),
     over AS (
       SELECT p.owner, sum(coalesce(s.bytes, 0)) - ? AS excess
         FROM processes p LEFT JOIN sizes s ON s.pid = p.pid
        WHERE NOT (p.idle_since < ? AND p.state = 'idle')
        GROUP BY p.owner HAVING sum(coalesce(s.bytes, 0)) - ? > 0
     )
     SELECT pid FROM (
       SELECT p.pid, p.idle_since, o.excess,
              coalesce(sum(coalesce(s.bytes, 0)) OVER (
                PARTITION BY p.owner ORDER BY p.idle_since, p.pid
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM processes p JOIN over o ON o.owner = p.owner LEFT JOIN sizes s ON s.pid = p.pid
        WHERE p.state = 'idle' AND p.idle_since >= ?
     ) ranked WHERE before < excess ORDER BY idle_since, pid LIMIT ?`,
      [quota.maxBytes, cutoff, quota.maxBytes, cutoff, limit - chosen.length],
    )
  ).map((row) => Number(row.pid));
  return [...new Set([...chosen, ...overBytes])].slice(0, limit);
}

/** A version 3 Postgres database (no `stored_bytes`) with the bench's processes, outputs and logs. */
function pgVersion3Rows(now: number): string {
  const half = PROCESSES * ROWS_PER_KIND;
  return [
    ...PG_MIGRATIONS.filter((m) => m.version <= 3).map((m) => m.sql),
    'CREATE TABLE mci_schema (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)',
    'INSERT INTO mci_schema (version) VALUES (3)',
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
  ].join(';\n');
}

type Rule = () => number[] | Promise<number[]>;

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
  const store = openSqliteStore({ path });
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
    store.flush();
  }
  await store.close();
  return seq;
}

async function sqliteSweeps(dir: string): Promise<BenchResult[]> {
  const path = join(dir, 'mci.db');
  const rows = await fill(path);
  const db = new DatabaseSync(path, { readOnly: true });
  const read: Read = (sql) => db.prepare(sql);
  const cutoff = Date.now() - 7 * 86_400_000;
  try {
    const results: BenchResult[] = [];
    for (const [label, maxBytes] of Object.entries(QUOTAS)) {
      const quota = { maxProcesses: 100_000, maxBytes };
      results.push(
        ...(await race(`SQLite, ${label}`, rows, {
          counted: () => readExpiredPids(read, cutoff, quota, LIMIT),
          summed: () => expiredSummingRows(read, cutoff, quota, LIMIT),
        })),
      );
    }
    return results;
  } finally {
    db.close();
  }
}

async function postgresSweeps(): Promise<BenchResult[]> {
  await using db = await freshDatabase();
  const now = Date.now();
  await adminQueryOn(db.url, pgVersion3Rows(now));
  const begin = performance.now();
  const store = await openPostgresStore({ url: db.url, timeoutMs: 300_000 });
  const migrateMs = performance.now() - begin;
  try {
    const sql = store.sqlDatabase();
    const read: PgRead = (text, params) => sql.query(text, params);
    const [{ bytes }] = (await read('SELECT sum(stored_bytes)::bigint AS bytes FROM processes', [])) as [
      { bytes: string },
    ];
    const rows = 2 * PROCESSES * ROWS_PER_KIND;
    const cutoff = now - 7 * 86_400_000;
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
          counted: () => readPgExpiredPids(read, cutoff, quota, LIMIT),
          summed: () => expiredSummingPgRows(read, cutoff, quota, LIMIT),
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
