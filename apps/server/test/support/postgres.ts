import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

/** The PostgreSQL server the tests use (trust auth on the project's machines and CI). */
export const POSTGRES_ADMIN_URL =
  process.env.MCI_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs one statement on the admin database. */
export function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  return adminQueryOn(POSTGRES_ADMIN_URL, sql, params);
}

/** Runs SQL on the database at `url` (several statements when `params` is empty). */
export async function adminQueryOn(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database `mci_test_<random>` for one test or suite; `url` connects to it, and disposing
 * drops it (closing any connection left).
 */
export async function freshDatabase(): Promise<{ url: string; name: string } & AsyncDisposable> {
  const name = `mci_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async [Symbol.asyncDispose]() {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * A {@link freshDatabase} maker for one suite: every database it made is dropped in `afterAll`.
 * Call it at a suite's top level (or in a `describe` body).
 */
export function suiteDatabases(): () => Promise<{ url: string; name: string }> {
  const databases: AsyncDisposable[] = [];
  afterAll(async () => {
    for (const db of databases) await db[Symbol.asyncDispose]();
  });
  return async () => {
    const db = await freshDatabase();
    databases.push(db);
    return db;
  };
}
