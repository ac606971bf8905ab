import { describe, it } from 'vitest';
import { sqliteEquivalence } from '../../test/support/sqlite-equivalence.ts';

// A few sequences here; test/store-equivalence.slow.test.ts runs the property at full size.
const equivalence = sqliteEquivalence(5);

describe('SQLite store equals the in-memory store', () => {
  it('with the default cache', { timeout: 120_000 }, equivalence.defaultCache);
  it(
    'with a cache of two processes (constant eviction) and per-turn batches',
    { timeout: 120_000 },
    equivalence.evictingCache,
  );
});
