import { describePostgresEquivalence } from './support/postgres-equivalence.ts';

// The store-equivalence property on PostgreSQL at full size (the slow project).
describePostgresEquivalence(25);
