// Retention's sweep over a large store: one `expiredProcesses` selection (age, count and byte quota)
// on an SQLite file of 2,000 processes of two principals with 250 outputs and 250 log lines each
// (1,000,000 output and log rows), with the byte quota read from `processes.stored_bytes` (the store's
// rule) and, as the baseline, summed from every output and log row at each sweep. Both run on one
// reader connection of the same file, in alternating rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { openSqliteStore } from '../src/store/sqlite-store.ts';
import { readExpiredPids } from '../src/store/store-reads.ts';

const PROCESSES = 2000;
const ROWS_PER_KIND = 250;
const ROUNDS = 7;

type Read = (sql: string) => StatementSync;

/**
 * The baseline: the byte rule measured by summing the sizes of every `outputs` and `logs` row of the
 * principals (the age and count rules are the store's).
 */
function expiredSummingRows(
  read: Read,
  cutoff: number,
  quota: { maxProcesses: number; maxBytes: number },
  limit: number,
): number[] {
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

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-retention-bench-'));
  try {
    const path = join(dir, 'mci.db');
    const rows = await fill(path);
    const db = new DatabaseSync(path, { readOnly: true });
    const read: Read = (sql) => db.prepare(sql);
    const now = Date.now();
    const cutoff = now - 7 * 86_400_000;
    const limit = 500;
    // The default quota (nothing over it: every byte is still measured) and one each principal is over.
    const quotas = { 'quota not reached': 1024 ** 3, 'quota of 1 MB reached': 1_000_000 };
    const results: BenchResult[] = [];
    for (const [label, maxBytes] of Object.entries(quotas)) {
      const quota = { maxProcesses: 100_000, maxBytes };
      const rules = {
        counted: () => readExpiredPids(read, cutoff, quota, limit),
        summed: () => expiredSummingRows(read, cutoff, quota, limit),
      };
      const expected = rules.summed();
      if (JSON.stringify(rules.counted()) !== JSON.stringify(expected))
        throw new Error(`the two byte rules select different processes (${label})`);
      const times = { counted: [] as number[], summed: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of round % 2 === 0
          ? (['counted', 'summed'] as const)
          : (['summed', 'counted'] as const)) {
          const begin = performance.now();
          rules[name]();
          times[name].push(performance.now() - begin);
        }
      }
      const counted = percentile(times.counted, 50);
      const summed = percentile(times.summed, 50);
      results.push(
        {
          name: `retention sweep, ${rows} output+log rows, ${label}: rows summed (median of ${ROUNDS})`,
          value: summed,
          unit: 'ms',
        },
        compared(
          `retention sweep, ${rows} output+log rows, ${label}: stored_bytes (median of ${ROUNDS}, ${expected.length} selected)`,
          counted,
          'ms',
          { name: 'rows summed', value: summed },
        ),
      );
    }
    db.close();
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
