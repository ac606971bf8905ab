import { describe, it } from 'vitest';
import { postgresEquivalence } from './support/postgres-equivalence.ts';
import { sqliteEquivalence } from './support/sqlite-equivalence.ts';

// The store-equivalence property at full size on both engines (the slow project);
// src/store/store-equivalence.test.ts runs a few sequences on SQLite in the fast one.
describe.each([
  { engine: 'SQLite', equivalence: sqliteEquivalence(60) },
  { engine: 'Postgres', equivalence: postgresEquivalence(25) },
])('$engine store equals the in-memory store', ({ equivalence }) => {
  it('with the default cache', { timeout: 240_000 }, equivalence.defaultCache);
  it(
    'with a cache of two processes (constant eviction) and per-turn batches',
    { timeout: 240_000 },
    equivalence.evictingCache,
  );
});
