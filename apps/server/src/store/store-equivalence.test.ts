import { describeSqliteEquivalence } from '../../test/support/sqlite-equivalence.ts';

// A few sequences here; store-equivalence.slow.test.ts runs the property at full size.
describeSqliteEquivalence(5);
