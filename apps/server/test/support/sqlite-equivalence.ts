import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sql/open-sqlite.ts';
import { type ByteRecount, checkEquivalence, RECOUNT_SQL, storeOps } from './store-equivalence.ts';

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
 * per cache setting, each in a fresh file of a temporary directory removed after the file.
 */
export function describeSqliteEquivalence(numRuns: number): void {
  const dir = mkdtempSync(join(tmpdir(), 'mci-equivalence-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const freshPath = () => join(dir, `eq-${++files}.db`);

  describe('SQLite store equals the in-memory store', () => {
    it('with the default cache', { timeout: 120_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(storeOps, (list) => {
          const path = freshPath();
          return checkEquivalence(list, () => openSqliteStore({ path }), 6, recountSqliteFile(path));
        }),
        { numRuns },
      );
    });

    it('with a cache of two processes (constant eviction) and per-turn batches', {
      timeout: 120_000,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(storeOps, (list) => {
          const path = freshPath();
          return checkEquivalence(
            list,
            () => openSqliteStore({ path, cache: { processes: 2, bytes: 4096 }, flushDelayMs: 0 }),
            1,
            recountSqliteFile(path),
          );
        }),
        { numRuns },
      );
    });
  });
}
