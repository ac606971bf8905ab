import { type Generated, type Kysely, sql, type Transaction } from 'kysely';
import { StoreError } from '../store-error.ts';
import type { Engine } from './engine.ts';
import type { Database, Db } from './tables.ts';

/**
 * `PRAGMA application_id` of an MCI process database in SQLite ("MCI1"), so a foreign SQLite file is
 * refused; in PostgreSQL, the key of the advisory lock that serialises migrations.
 */
export const APPLICATION_ID = 0x4d434931;

/** Where a database keeps its schema version: the one engine-specific part of {@link migrate}. */
export interface Ledger {
  /**
   * The version of the database before migrating (0 for a new one).
   * @throws StoreError `STORE_FOREIGN` for a database of something else.
   */
  found(db: Kysely<Database>, label: string): Promise<number>;
  /** First in a step's transaction: waits for the steps of other servers, then reads the version. */
  lock(trx: Transaction<Database>): Promise<number>;
  /** Last in a step's transaction: records `version`. */
  record(trx: Transaction<Database>, version: number): Promise<void>;
  /** What to do about a database of a newer server (the end of the `STORE_TOO_NEW` message). */
  advice: string;
}

/** A number PRAGMA of SQLite (`user_version`, `application_id`). */
async function pragma(db: Db, name: 'user_version' | 'application_id'): Promise<number> {
  const { rows } = await sql<Record<string, unknown>>`PRAGMA ${sql.raw(name)}`.execute(db);
  return Number(Object.values(rows[0] ?? {})[0] ?? 0);
}

/**
 * SQLite: the version is `PRAGMA user_version`; `PRAGMA application_id` marks the file as MCI's.
 * @see https://sqlite.org/pragma.html#pragma_user_version
 */
const SQLITE_LEDGER: Ledger = {
  async found(db, label) {
    const version = await pragma(db, 'user_version');
    const applicationId = await pragma(db, 'application_id');
    const { rows } = await sql`SELECT 1 FROM sqlite_schema WHERE type = 'table' LIMIT 1`.execute(db);
    if (applicationId !== APPLICATION_ID && (applicationId !== 0 || rows.length > 0)) {
      throw new StoreError(
        'STORE_FOREIGN',
        label,
        `${label} is an SQLite database of another application, not an MCI process database; pass another --db`,
      );
    }
    return version;
  },
  async lock(trx) {
    // Setting a header field is a write: the transaction holds the write lock from here, as
    // `BEGIN IMMEDIATE` would.
    await sql`PRAGMA application_id = ${sql.lit(APPLICATION_ID)}`.execute(trx);
    return pragma(trx, 'user_version');
  },
  async record(trx, version) {
    await sql`PRAGMA user_version = ${sql.lit(version)}`.execute(trx);
  },
  advice: 'upgrade mci, or pass another --db',
};

/** The one-row table of the schema version in PostgreSQL. */
type SchemaTable = {
  mci_schema: { one: Generated<boolean>; version: number };
};

/**
 * PostgreSQL: the version is the row of `mci_schema`; every read and change of it holds the
 * transaction-scoped advisory lock {@link APPLICATION_ID}, so nodes starting together migrate one
 * after another and the later ones find the steps done.
 * @see https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS
 */
const POSTGRES_LEDGER: Ledger = {
  found(db) {
    return db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${APPLICATION_ID})`.execute(trx);
      await trx.schema
        .createTable('mci_schema')
        .ifNotExists()
        .addColumn('one', 'boolean', (c) => c.primaryKey().defaultTo(true).check(sql`one`))
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute();
      return postgresVersion(trx);
    });
  },
  async lock(trx) {
    await sql`SELECT pg_advisory_xact_lock(${APPLICATION_ID})`.execute(trx);
    return postgresVersion(trx);
  },
  async record(trx, version) {
    await trx
      .withTables<SchemaTable>()
      .insertInto('mci_schema')
      .values({ version })
      .onConflict((c) => c.column('one').doUpdateSet({ version }))
      .execute();
  },
  advice: 'upgrade mci on every node, or pass another --db',
};

async function postgresVersion(trx: Transaction<Database>): Promise<number> {
  const row = await trx
    .withTables<SchemaTable>()
    .selectFrom('mci_schema')
    .select('version')
    .executeTakeFirst();
  return row?.version ?? 0;
}

/** The ledger of `engine`'s databases. */
export const ledgerOf = (engine: Engine): Ledger =>
  engine.kind === 'sqlite' ? SQLITE_LEDGER : POSTGRES_LEDGER;
