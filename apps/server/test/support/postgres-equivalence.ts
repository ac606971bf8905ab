import fc from 'fast-check';
import { describe, it } from 'vitest';
import { openPostgresStore } from '../../src/store/sql/open-postgres.ts';
import { adminQueryOn, suiteDatabases } from './postgres.ts';
import { type ByteRecount, checkEquivalence, RECOUNT_SQL, storeOps } from './store-equivalence.ts';

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
 * sequences per cache setting, in a fresh database dropped after the file.
 */
export function describePostgresEquivalence(numRuns: number): void {
  const fresh = suiteDatabases();
  describe('Postgres store equals the in-memory store', () => {
    // One database for all runs, emptied before each (creating one per run would dominate the time).
    const empty = (url: string) =>
      adminQueryOn(url, 'TRUNCATE processes, runs, outputs, logs, events; UPDATE counters SET value = 0');

    it('with the default cache', { timeout: 240_000 }, async () => {
      const { url } = await fresh();
      await (await openPostgresStore({ url })).close();
      await fc.assert(
        fc.asyncProperty(storeOps, async (list) => {
          await empty(url);
          await checkEquivalence(list, () => openPostgresStore({ url }), 6, recountDatabase(url));
        }),
        { numRuns },
      );
    });

    it('with a cache of two processes (constant eviction) and per-turn batches', {
      timeout: 240_000,
    }, async () => {
      const { url } = await fresh();
      await (await openPostgresStore({ url })).close();
      await fc.assert(
        fc.asyncProperty(storeOps, async (list) => {
          await empty(url);
          await checkEquivalence(
            list,
            () => openPostgresStore({ url, cache: { processes: 2, bytes: 4096 }, flushDelayMs: 0 }),
            1,
            recountDatabase(url),
          );
        }),
        { numRuns },
      );
    });
  });
}
