import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll } from 'vitest';
import { openSqliteStore } from '../../src/store/sql/open-sqlite.ts';
import {
  type ByteRecount,
  type EquivalenceChecks,
  equivalenceChecks,
  RECOUNT_SQL,
  recountRows,
} from './store-equivalence.ts';

/** Reads the byte counts of the (closed) database at `path`. */
export const recountSqliteFile =
  (path: string): ByteRecount =>
  async () => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return recountRows(db.prepare(RECOUNT_SQL((column) => `length(CAST(${column} AS BLOB))`)).all());
    } finally {
      db.close();
    }
  };

/**
 * The store-equivalence property on SQLite (see {@link equivalenceChecks}), `numRuns` write sequences
 * per check, each in a fresh file of a temporary directory removed after the file. Call it at a test
 * file's top level; the file declares the tests itself (`vitest list` finds tests by reading the file,
 * not by running it).
 */
export function sqliteEquivalence(numRuns: number): EquivalenceChecks {
  const dir = mkdtempSync(join(tmpdir(), 'mci-equivalence-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  return equivalenceChecks(numRuns, async (tuning) => async () => {
    const path = join(dir, `eq-${++files}.db`);
    return { open: () => openSqliteStore({ path, ...tuning }), recount: recountSqliteFile(path) };
  });
}
