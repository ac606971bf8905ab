import { describeSqliteEquivalence } from '../../test/support/sqlite-equivalence.ts';

// The store-equivalence property on SQLite at full size (the slow project).
describeSqliteEquivalence(60);
