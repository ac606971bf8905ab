import { describe, it } from 'vitest';
import { postgresEquivalence } from './support/postgres-equivalence.ts';

// The store-equivalence property on PostgreSQL at full size (the slow project).
const equivalence = postgresEquivalence(25);

describe('Postgres store equals the in-memory store', () => {
  it('with the default cache', { timeout: 240_000 }, equivalence.defaultCache);
  it(
    'with a cache of two processes (constant eviction) and per-turn batches',
    { timeout: 240_000 },
    equivalence.evictingCache,
  );
});
