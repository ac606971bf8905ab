import { describe, it } from 'vitest';
import { assertStoresEquivalent } from '../../test/support/store-equivalence.ts';

// A few short write sequences; store-equivalence.slow.test.ts runs the property at full size.
const size = { numRuns: 5, maxOps: 30 };

describe('SQLite store equals the in-memory store', () => {
  it('with the default cache', { timeout: 120_000 }, () => assertStoresEquivalent({}, size));

  it('with a cache of two processes (constant eviction) and per-turn batches', { timeout: 120_000 }, () =>
    assertStoresEquivalent({ cache: { processes: 2, bytes: 4096 }, flushDelayMs: 0 }, size),
  );
});
