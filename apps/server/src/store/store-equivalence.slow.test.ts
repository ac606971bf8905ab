import { describe, it } from 'vitest';
import { sqliteEquivalence } from '../../test/support/sqlite-equivalence.ts';

// The store-equivalence property on SQLite at full size (the slow project).
const equivalence = sqliteEquivalence(60);

describe('SQLite store equals the in-memory store', () => {
  it('with the default cache', { timeout: 120_000 }, equivalence.defaultCache);
  it(
    'with a cache of two processes (constant eviction) and per-turn batches',
    { timeout: 120_000 },
    equivalence.evictingCache,
  );
});
