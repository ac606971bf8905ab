import { openPostgresStore } from '../../src/store/sql/open-postgres.ts';
import { adminQueryOn, suiteDatabases } from './postgres.ts';
import {
  type ByteRecount,
  type EquivalenceChecks,
  equivalenceChecks,
  RECOUNT_SQL,
  recountRows,
} from './store-equivalence.ts';

/** Reads the byte counts of the database at `url`. */
export const recountDatabase =
  (url: string): ByteRecount =>
  async () =>
    recountRows(
      (
        await adminQueryOn(
          url,
          RECOUNT_SQL((column) => `octet_length(${column})`),
        )
      ).rows,
    );

/**
 * The store-equivalence property on PostgreSQL (see {@link equivalenceChecks}), `numRuns` write
 * sequences per check, each check in a fresh database dropped after the file. Call it at a test
 * file's top level; the file declares the tests itself (`vitest list` finds tests by reading the file,
 * not by running it).
 */
export function postgresEquivalence(numRuns: number): EquivalenceChecks {
  const fresh = suiteDatabases();
  return equivalenceChecks(numRuns, async (tuning) => {
    // One database for all sequences of a check, emptied before each (one per sequence would dominate the time).
    const { url } = await fresh();
    await (await openPostgresStore({ url })).close();
    return async () => {
      await adminQueryOn(
        url,
        'TRUNCATE processes, runs, outputs, logs, events; UPDATE counters SET value = 0',
      );
      return { open: () => openPostgresStore({ url, ...tuning }), recount: recountDatabase(url) };
    };
  });
}
