import { expect } from 'vitest';
import type { StoredProcess } from '../../src/processes/process-store.ts';
import type { SqlProcessStore } from '../../src/store/sql/sql-store.ts';
import type { ByteRecount } from './store-equivalence.ts';
import { storedProcess } from './stored-process.ts';

// The byte count of each process (`processes.stored_bytes`) that retention's byte quota reads, checked
// the same way on the SQLite and the Postgres store.

const record = (pid: number, owner: string, fields: Partial<StoredProcess> = {}) =>
  storedProcess(pid, { owner, ...fields });

const queued = { state: 'queued', status: null, queuedAt: '2026-01-01T00:00:00.000Z' } as const;

/**
 * Writes outputs and logs (in one batch and across batches), runs a run number again over its
 * leftovers, starts a later run, replaces a record and deletes a process; then expects the byte quota
 * to select by the bytes left. Returns the bytes each remaining process holds (pid -> bytes).
 */
export async function writeByteHistory(store: SqlProcessStore): Promise<Map<number, number>> {
  store.putProcess(record(1, 'alice'));
  store.putProcess(record(2, 'alice'));
  store.putProcess(record(3, 'bob'));
  store.insertRun(1, 1, queued);
  store.appendOutput(1, 1, 1, 'x'.repeat(10)); // "xxxxxxxxxx": 12 bytes
  store.appendLog(1, 1, 2, 'stdout', 'é'.repeat(5)); // 10 bytes of UTF-8
  store.flush();
  store.appendOutput(1, 1, 3, { a: 1 }); // {"a":1}: 7 bytes
  store.insertRun(2, 1, queued);
  store.appendLog(2, 1, 4, 'stderr', '€'); // 3 bytes
  store.flush();
  // Run 1 of pid 1 again: its 29 bytes of leftovers go with it.
  store.insertRun(1, 1, queued);
  store.appendOutput(1, 1, 5, 'yy'); // 4 bytes
  store.insertRun(1, 2, queued);
  store.appendLog(1, 2, 6, 'stdout', 'abc'); // 3 bytes, run 1 kept
  store.putProcess(record(1, 'alice', { status: 'success', runs: 2 })); // a replaced record keeps its bytes
  store.insertRun(3, 1, queued);
  store.appendOutput(3, 1, 7, 'z'.repeat(98)); // 100 bytes
  store.deleteProcess(2);
  const now = Date.now();
  const policy = (maxBytes: number) => ({
    maxAgeMs: 3_600_000,
    maxProcesses: 100,
    maxBytes,
    limit: 100,
    now,
  });
  const expired = async (maxBytes: number) =>
    (await store.expiredProcesses(policy(maxBytes))).sort((a, b) => a - b);
  expect(await expired(100)).toEqual([]);
  expect(await expired(99)).toEqual([3]);
  expect(await expired(6)).toEqual([1, 3]);
  expect(await expired(7)).toEqual([3]);
  return new Map([
    [1, 7],
    [3, 100],
  ]);
}

/** Expects each process's `stored_bytes` to be `expected` (pid -> bytes) and to equal a recount. */
export async function expectByteCounts(recount: ByteRecount, expected: Map<number, number>): Promise<void> {
  const rows = await recount();
  expect(rows).toEqual([...expected].map(([pid, bytes]) => ({ pid, stored: bytes, counted: bytes })));
}

/** Rows of a version 3 database (before `stored_bytes`): pid 1 (alice) and 2 (bob) with outputs and logs. */
export const V3_ROWS = {
  processes: `INSERT INTO processes (pid, owner, code, lang, created_at, timeout_ms, memory_limit_mb, state, status, runs, idle_since)
    VALUES (1, 'alice', 'output(1)', 'ts', '2026-01-01T00:00:00.000Z', 1000, 64, 'idle', 'success', 1, 1),
           (2, 'bob', 'output(2)', 'ts', '2026-01-01T00:00:00.000Z', 1000, 64, 'idle', 'success', 1, 2),
           (3, 'bob', 'output(3)', 'ts', '2026-01-01T00:00:00.000Z', 1000, 64, 'idle', null, 0, 3)`,
  /** `bytes` writes a blob literal of hex digits: `X'..'` in SQLite, `decode('..', 'hex')` in Postgres. */
  outputs: (bytes: (hex: string) => string) =>
    `INSERT INTO outputs (seq, pid, run, value) VALUES (1, 1, 1, ${bytes('2261626322')}), (3, 2, 1, ${bytes('7b7d')})`,
  logs: `INSERT INTO logs (seq, pid, run, stream, text) VALUES (2, 1, 1, 'stdout', 'héllo'), (4, 1, 1, 'stderr', '€')`,
  /** What the migration counts: pid 1 `"abc"` 5 + `héllo` 6 + `€` 3; pid 2 `{}` 2; pid 3 nothing. */
  expected: new Map([
    [1, 14],
    [2, 2],
    [3, 0],
  ]),
};
