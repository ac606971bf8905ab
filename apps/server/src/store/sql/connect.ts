import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { Database } from './tables.ts';

/** A statement that does nothing (see the ROLLBACK in {@link sqliteKysely}). */
const NO_OP = {
  reader: false,
  all: () => [],
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  iterate: () => [][Symbol.iterator](),
};

/** Prepared statements kept per SQLite connection, by their SQL. */
const STATEMENTS = 500;

/**
 * Kysely over an open node:sqlite connection, which the caller keeps (closing the Kysely instance
 * leaves the connection open). Statements are prepared once and kept (a bounded cache by SQL text).
 * @see https://nodejs.org/api/sqlite.html
 */
export function sqliteKysely(db: DatabaseSync): Kysely<Database> {
  const statements = new LRUCache<string, { statement: StatementSync; reader: boolean }>({ max: STATEMENTS });
  const prepare = (text: string) => {
    let found = statements.get(text);
    if (!found) {
      const statement = db.prepare(text);
      found = { statement, reader: statement.columns().length > 0 };
      statements.set(text, found);
    }
    return found;
  };
  const bind = (parameters: ReadonlyArray<unknown>) => parameters as SQLInputValue[];
  return new Kysely<Database>({
    dialect: new SqliteDialect({
      database: {
        close() {},
        prepare(text) {
          // SQLite rolls a transaction back by itself after some errors (SQLITE_FULL, SQLITE_IOERR);
          // a second ROLLBACK would fail and hide the error that caused it.
          if (text === 'rollback' && !db.isTransaction) return NO_OP;
          const { statement, reader } = prepare(text);
          return {
            reader,
            all: (parameters) => statement.all(...bind(parameters)),
            run: (parameters) => statement.run(...bind(parameters)),
            iterate: (parameters) => statement.iterate(...bind(parameters)),
          };
        },
      },
    }),
  });
}

/** `bigint` (pids, seqs, epoch ms) as numbers: every one stays below 2^53. */
const parseInt8 = (value: string) => Number(value);

/** Options of {@link postgresPool}. */
export interface PostgresPoolOptions {
  /** Connections of the pool. @default 4 */
  size?: number;
  /** How long (ms) opening a connection may take. @default 5000 */
  connectMs?: number;
}

/**
 * A `pg` pool for `url` whose `bigint` columns are numbers. A connection the server ends (a restart,
 * `pg_terminate_backend`) is dropped by the pool; the next query opens a new one.
 */
export function postgresPool(url: string, options: PostgresPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.size ?? 4,
    connectionTimeoutMillis: options.connectMs ?? 5000,
    // Queries sent together on one client go out without waiting for each answer (a batch's statements).
    pipeline: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === pg.types.builtins.INT8
          ? parseInt8
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on('error', () => {});
  // A connection that drops while checked out fails its query; its 'error' event adds nothing.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Kysely over a `pg` pool, which the caller keeps (closing the Kysely instance leaves it open). */
export function postgresKysely(pool: pg.Pool): Kysely<Database> {
  return new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: { connect: () => pool.connect(), end: async () => {}, options: pool.options },
    }),
  });
}
