import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { afterAll } from 'vitest';
import { openSqliteStore, type SqliteStoreOptions } from '../../src/store/sql/open-sqlite.ts';
import {
  type ByteRecount,
  checkEquivalence,
  type EquivalenceChecks,
  RECOUNT_SQL,
  storeOps,
} from './store-equivalence.ts';

/** Reads the byte counts of the (closed) database at `path`. */
export const recountSqliteFile =
  (path: string): ByteRecount =>
  async () => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const rows = db.prepare(RECOUNT_SQL((column) => `length(CAST(${column} AS BLOB))`)).all();
      return rows.map((row) => ({
        pid: Number(row.pid),
        stored: Number(row.stored),
        counted: Number(row.counted),
      }));
    } finally {
      db.close();
    }
  };

/**
 * The store-equivalence property on SQLite (see {@link checkEquivalence}), `numRuns` write sequences
 * per check, each in a fresh file of a temporary directory removed after the file. Call it at a test
 * file's top level; the file declares the tests itself (`vitest list` finds tests by reading the file,
 * not by running it).
 */
export function sqliteEquivalence(numRuns: number): EquivalenceChecks {
  const dir = mkdtempSync(join(tmpdir(), 'mci-equivalence-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const freshPath = () => join(dir, `eq-${++files}.db`);
  const check = async (options: Omit<SqliteStoreOptions, 'path'>, commitMs: number) => {
    await fc.assert(
      fc.asyncProperty(storeOps, (list) => {
        const path = freshPath();
        return checkEquivalence(
          list,
          () => openSqliteStore({ path, ...options }),
          commitMs,
          recountSqliteFile(path),
        );
      }),
      { numRuns },
    );
  };
  return {
    defaultCache: () => check({}, 6),
    evictingCache: () => check({ cache: { processes: 2, bytes: 4096 }, flushDelayMs: 0 }, 1),
  };
}
