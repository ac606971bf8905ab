import { type AliasedRawBuilder, type RawBuilder, sql } from 'kysely';

/** Which SQL engine holds the process database. */
export type EngineKind = 'sqlite' | 'postgres';

/** The SQL type of a column of a {@link Engine.rowset}. */
export type RowsetType = 'integer' | 'real' | 'text';

/**
 * What differs between SQLite and PostgreSQL, each in one place: column types of the schema, a set of
 * rows passed as one bound parameter (JSON) and read as a table, a text's bytes and their length.
 * Everything else (upserts with `ON CONFLICT ... DO UPDATE`, `RETURNING`, `UPDATE ... FROM`,
 * `INSERT ... SELECT`) is the same SQL in both.
 */
export interface Engine {
  readonly kind: EngineKind;
  /** Column types of the schema. */
  readonly types: {
    /** pids, seqs, epoch ms: SQLite's `INTEGER` (a `PRIMARY KEY` one is the rowid), PostgreSQL's `bigint`. */
    id: 'integer' | 'bigint';
    blob: 'blob' | 'bytea';
    real: 'real' | 'double precision';
    /** Points in time the database compares itself (node leases): SQLite's `TEXT`, PostgreSQL's `timestamptz`. */
    time: 'text' | 'timestamptz';
  };
  /**
   * `rows` as a table `alias` with `columns` (in this order), bound as one JSON parameter: the
   * `FROM` of a set-based `UPDATE` or `DELETE` of many rows in one statement.
   */
  rowset<T extends Record<string, unknown>>(
    rows: readonly T[],
    columns: Readonly<Record<keyof T & string, RowsetType>>,
    alias: string,
  ): AliasedRawBuilder<T, string>;
  /** A text as its UTF-8 bytes (a blob). */
  bytes(text: RawBuilder<unknown>): RawBuilder<Uint8Array>;
  /** The size in bytes of a text (as UTF-8) or blob value. */
  byteLength(value: RawBuilder<unknown>): RawBuilder<number>;
}

const PG_TYPES: Record<RowsetType, string> = { integer: 'bigint', real: 'double precision', text: 'text' };

/** SQLite 3.38+ (`->>` on `json_each` rows). */
export const SQLITE: Engine = {
  kind: 'sqlite',
  types: { id: 'integer', blob: 'blob', real: 'real', time: 'text' },
  rowset(rows, columns, alias) {
    const fields = Object.keys(columns).map(
      (name) => sql`value ->> ${sql.lit(`$.${name}`)} AS ${sql.ref(name)}`,
    );
    return sql<never>`(SELECT ${sql.join(fields)} FROM json_each(${JSON.stringify(rows)}))`.as(alias);
  },
  byteLength: (value) => sql<number>`length(CAST(${value} AS BLOB))`,
  bytes: (text) => sql<Uint8Array>`CAST(${text} AS BLOB)`,
};

/** PostgreSQL 13+. */
export const POSTGRES: Engine = {
  kind: 'postgres',
  types: { id: 'bigint', blob: 'bytea', real: 'double precision', time: 'timestamptz' },
  rowset(rows, columns, alias) {
    const fields = Object.entries(columns).map(
      ([name, type]) => sql`${sql.ref(name)} ${sql.raw(PG_TYPES[type as RowsetType])}`,
    );
    return sql<never>`(SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(${sql.join(fields)}))`.as(
      alias,
    );
  },
  byteLength: (value) => sql<number>`octet_length(${value})`,
  bytes: (text) => sql<Uint8Array>`convert_to(${text}, 'UTF8')`,
};
