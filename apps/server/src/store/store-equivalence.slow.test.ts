import { describe, it } from 'vitest';
import { assertStoresEquivalent } from '../../test/support/store-equivalence.ts';

// The full-size property (the slow project): 60 sequences of up to 60 writes per cache setting.
const size = { numRuns: 60, maxOps: 60 };

describe('SQLite store equals the in-memory store', () => {
  it('with the default cache', { timeout: 120_000 }, () => assertStoresEquivalent({}, size));

  it('with a cache of two processes (constant eviction) and per-turn batches', { timeout: 120_000 }, () =>
    assertStoresEquivalent({ cache: { processes: 2, bytes: 4096 }, flushDelayMs: 0 }, size),
  );
});
