import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { checkEquivalence, storeOps } from '../../test/support/store-equivalence.ts';
import { openSqliteStore } from './sqlite-store.ts';

// The SQLite store reads exactly like the in-memory store (see checkEquivalence): the full-size property.

const dir = mkdtempSync(join(tmpdir(), 'mci-equivalence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `eq-${++files}.db`);

describe('SQLite store equals the in-memory store', () => {
  it('with the default cache', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(storeOps, (list) => {
        const path = freshPath();
        return checkEquivalence(list, () => openSqliteStore({ path }), 6);
      }),
      { numRuns: 60 },
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
        );
      }),
      { numRuns: 60 },
    );
  });
});
