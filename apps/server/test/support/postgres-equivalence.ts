import fc from 'fast-check';
import { openPostgresStore, type PostgresStoreOptions } from '../../src/store/sql/open-postgres.ts';
import { adminQueryOn, suiteDatabases } from './postgres.ts';
import {
  type ByteRecount,
  checkEquivalence,
  type EquivalenceChecks,
  RECOUNT_SQL,
  storeOps,
} from './store-equivalence.ts';

/** Reads the byte counts of the database at `url`. */
export const recountDatabase =
  (url: string): ByteRecount =>
  async () =>
    (
      await adminQueryOn(
        url,
        RECOUNT_SQL((column) => `octet_length(${column})`),
      )
    ).rows.map((row) => ({
      pid: Number(row.pid),
      stored: Number(row.stored),
      counted: Number(row.counted),
    }));

/**
 * The store-equivalence property on PostgreSQL (see {@link checkEquivalence}), `numRuns` write
 * sequences per check, each check in a fresh database dropped after the file. Call it at a test
 * file's top level; the file declares the tests itself (`vitest list` finds tests by reading the file,
 * not by running it).
 */
export function postgresEquivalence(numRuns: number): EquivalenceChecks {
  const fresh = suiteDatabases();
  // One database for all runs of a check, emptied before each (creating one per run would dominate the time).
  const empty = (url: string) =>
    adminQueryOn(url, 'TRUNCATE processes, runs, outputs, logs, events; UPDATE counters SET value = 0');
  const check = async (options: Omit<PostgresStoreOptions, 'url'>, commitMs: number) => {
    const { url } = await fresh();
    await (await openPostgresStore({ url })).close();
    await fc.assert(
      fc.asyncProperty(storeOps, async (list) => {
        await empty(url);
        await checkEquivalence(
          list,
          () => openPostgresStore({ url, ...options }),
          commitMs,
          recountDatabase(url),
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
