import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/store/postgres/postgres-store.ts';
import { adminQuery, freshDatabase } from './support/postgres.ts';
import { describeProcessStoreContract } from './support/store-contract.ts';

const databases: AsyncDisposable[] = [];
afterAll(async () => {
  for (const db of databases) await db[Symbol.asyncDispose]();
});
const fresh = async () => {
  const db = await freshDatabase();
  databases.push(db);
  return db;
};

describeProcessStoreContract('postgres', async () => openPostgresStore({ url: (await fresh()).url }));
describeProcessStoreContract('postgres, per-turn batches, a cache of one', async () =>
  openPostgresStore({ url: (await fresh()).url, flushDelayMs: 0, cache: { processes: 1, bytes: 1024 } }),
);
