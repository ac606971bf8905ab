import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { V3_ROWS } from '../../../test/support/byte-counts.ts';
import { adminQueryOn, freshDatabase } from '../../../test/support/postgres.ts';
import { postgresKysely, postgresPool, sqliteKysely } from './connect.ts';
import { POSTGRES, SQLITE } from './engine.ts';
import { MIGRATIONS, type Migration, migrate, SCHEMA_VERSION } from './migrations.ts';
import { APPLICATION_ID } from './schema-ledger.ts';
import type { Database } from './tables.ts';

// The list of migrations builds, in each engine, exactly the schema of the schema-6 fixtures
// (databases the store of commit c2fa757 wrote, see test/fixtures/schema-6/README.md), fills
// `stored_bytes` at version 4 with the sizes V3_ROWS expects, refuses other databases with the
// messages of docs/storage.md and docs/cluster.md, and opens the fixtures without changing them.

/** The migrations of the release whose databases the schema-6 fixtures are. */
const SCHEMA_6 = MIGRATIONS.slice(0, 6);
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/schema-6/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mci-sql-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Row = Record<string, unknown>;

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as { name: string; code: string; message: string; path: string };
  }
  throw new Error('expected a rejection');
};

// ---------------------------------------------------------------------------------------- SQLite

/** Runs the new `migrate` on an open SQLite connection. */
async function migrateSqlite(db: DatabaseSync, label = ':memory:', migrations?: readonly Migration[]) {
  const kysely = sqliteKysely(db);
  try {
    return await migrate(kysely, SQLITE, label, migrations);
  } finally {
    await kysely.destroy();
  }
}

const pragmaRows = (db: DatabaseSync, pragma: string) => db.prepare(`PRAGMA ${pragma}`).all() as Row[];
const quoted = (name: unknown) => `"${String(name).replaceAll('"', '""')}"`;
/** SQL text without identifier quotes, with one space between tokens, in lower case. */
const normalized = (text: unknown) =>
  String(text)
    .replaceAll('"', '')
    .replace(/\s+/g, ' ')
    .replace(/\( /g, '(')
    .replace(/ \)/g, ')')
    .toLowerCase()
    .trim();

/**
 * What SQLite knows of the schema, as structure rather than text (the schema builder quotes names
 * and writes keywords in lower case): every object, each table's columns (declared type, NOT NULL,
 * default, key position), whether it is `WITHOUT ROWID` or `AUTOINCREMENT`, each index's columns,
 * uniqueness, origin and `WHERE` clause, and the version and application id.
 */
function sqliteSchema(db: DatabaseSync) {
  const objects = db
    .prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name')
    .all() as Row[];
  return {
    userVersion: pragmaRows(db, 'user_version')[0]?.user_version,
    applicationId: pragmaRows(db, 'application_id')[0]?.application_id,
    objects: objects.map(({ type, name, tbl_name, sql }) => {
      if (type === 'table') {
        const [list] = pragmaRows(db, `table_list(${quoted(name)})`);
        return {
          type,
          name,
          withoutRowid: list?.wr,
          strict: list?.strict,
          autoincrement: /\bautoincrement\b/i.test(String(sql)),
          columns: pragmaRows(db, `table_xinfo(${quoted(name)})`).map((c) => ({
            ...c,
            type: String(c.type).toLowerCase(),
          })),
          indexes: pragmaRows(db, `index_list(${quoted(name)})`).map(({ seq: _, ...index }) => index),
        };
      }
      if (type === 'index') {
        const where = sql === null ? null : (normalized(sql).match(/ where (.*)$/)?.[1] ?? null);
        return {
          type,
          name,
          table: tbl_name,
          where,
          columns: pragmaRows(db, `index_xinfo(${quoted(name)})`),
        };
      }
      return { type, name, table: tbl_name, sql: normalized(sql) };
    }),
  };
}

const sqliteRows = (db: DatabaseSync, table: string) =>
  db.prepare(`SELECT * FROM ${quoted(table)} ORDER BY 1, 2`).all() as Row[];

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** A copy of the schema-6 SQLite fixture, at `name` in the test's directory. */
function sqliteFixture(name: string): string {
  const path = join(dir, name);
  copyFileSync(join(FIXTURES, 'mci.db'), path);
  return path;
}

/** The schema of the schema-6 SQLite fixture. */
function sqliteFixtureSchema() {
  const db = new DatabaseSync(sqliteFixture('schema.db'), { readOnly: true });
  try {
    return sqliteSchema(db);
  } finally {
    db.close();
  }
}

/** Columns added to the tables of schema 6 since (null in migrated rows). */
const ADDED_COLUMNS: Record<string, string[]> = { processes: ['check', 'session'], runs: ['warnings'] };

/** What V3_ROWS expects in `processes.stored_bytes` after version 4, by pid. */
const expectedBytes = [...V3_ROWS.expected].map(([pid, bytes]) => ({ pid, stored_bytes: bytes }));

/** A migration after the last that creates a table, then fails: it must leave nothing behind. */
const FAILING: Migration = {
  version: SCHEMA_VERSION + 1,
  description: 'fails halfway',
  async up(trx) {
    await trx.schema.createTable('halfway').addColumn('x', 'integer').execute();
    throw new Error('step failed');
  },
};

describe('SQLite', () => {
  it('builds the schema of the schema-6 fixture', async () => {
    const built = new DatabaseSync(':memory:');
    expect(await migrateSqlite(built, ':memory:', SCHEMA_6)).toEqual({ from: 0, to: 6 });
    const schema = sqliteSchema(built);
    expect(schema).toEqual(sqliteFixtureSchema());
    expect(schema.userVersion).toBe(6);
    expect(schema.applicationId).toBe(APPLICATION_ID);
    expect(schema.objects.find((o) => o.name === 'runs')).toMatchObject({ withoutRowid: 1 });
    expect(schema.objects.find((o) => o.name === 'chat_messages')).toMatchObject({ autoincrement: true });
    expect(schema.objects.find((o) => o.name === 'processes_ref')).toMatchObject({
      where: 'ref is not null',
    });
    expect(sqliteRows(built, 'counters')).toEqual([
      { name: 'pid', value: 0 },
      { name: 'seq', value: 0 },
    ]);
  });

  it('fills processes.stored_bytes at version 4 with the sizes of outputs and logs', async () => {
    const db = new DatabaseSync(':memory:');
    expect(await migrateSqlite(db, ':memory:', MIGRATIONS.slice(0, 3))).toEqual({ from: 0, to: 3 });
    db.exec(V3_ROWS.processes);
    db.exec(V3_ROWS.outputs((hex) => `X'${hex}'`));
    db.exec(V3_ROWS.logs);
    expect(await migrateSqlite(db, ':memory:', SCHEMA_6)).toEqual({ from: 3, to: 6 });
    expect(db.prepare('SELECT pid, stored_bytes FROM processes ORDER BY pid').all()).toEqual(expectedBytes);
    expect(sqliteSchema(db)).toEqual(sqliteFixtureSchema());
  });

  it('opens the schema-6 fixture in place with the schema-6 migrations and changes nothing', async () => {
    const path = sqliteFixture('schema-6.db');
    const before = sha256(path);
    const db = new DatabaseSync(path);
    const schema = sqliteSchema(db);
    const rows = Object.fromEntries(
      ['processes', 'runs', 'outputs', 'logs', 'events', 'counters'].map((t) => [t, sqliteRows(db, t)]),
    );
    expect(await migrateSqlite(db, path, SCHEMA_6)).toEqual({ from: 6, to: 6 });
    expect(sqliteSchema(db)).toEqual(schema);
    expect(Object.fromEntries(Object.keys(rows).map((t) => [t, sqliteRows(db, t)]))).toEqual(rows);
    db.close();
    expect(sha256(path)).toBe(before);
  });

  it('migrates a copy of the schema-6 fixture to this version, keeping every row', async () => {
    const path = join(dir, 'schema-6-copy.db');
    copyFileSync(sqliteFixture('schema-6.db'), path);
    const db = new DatabaseSync(path);
    const tables = ['processes', 'runs', 'outputs', 'logs', 'events', 'counters'];
    const rows = Object.fromEntries(tables.map((t) => [t, sqliteRows(db, t)]));
    expect(await migrateSqlite(db, path)).toEqual({ from: 6, to: SCHEMA_VERSION });
    const withoutAdded = (table: string) =>
      sqliteRows(db, table).map((row) =>
        Object.fromEntries(Object.entries(row).filter(([column]) => !ADDED_COLUMNS[table]?.includes(column))),
      );
    expect(Object.fromEntries(tables.map((t) => [t, withoutAdded(t)]))).toEqual(rows);
    expect(sqliteRows(db, 'runs').every((row) => row.warnings === null)).toBe(true);
    for (const table of [
      'policies',
      'approvals',
      'run_delivered',
      'calls',
      'run_files',
      'quota_windows',
      'sessions',
      'state',
      'skills',
      'skill_versions',
    ])
      expect(sqliteRows(db, table)).toEqual([]);
    db.close();
  });

  it('refuses an SQLite database of another application, and changes nothing', async () => {
    const otherId = new DatabaseSync(':memory:');
    otherId.exec('PRAGMA application_id = 42');
    const noId = new DatabaseSync(':memory:');
    noId.exec('CREATE TABLE notes (text TEXT)');
    for (const db of [otherId, noId]) {
      const error = await rejection(migrateSqlite(db, '/data/other.db'));
      expect(error).toMatchObject({ name: 'StoreError', code: 'STORE_FOREIGN', path: '/data/other.db' });
      expect(error.message).toBe(
        '/data/other.db is an SQLite database of another application, not an MCI process database; pass another --db',
      );
      expect(pragmaRows(db, 'user_version')).toEqual([{ user_version: 0 }]);
      expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'processes'").get()).toBeUndefined();
    }
  });

  it('refuses a database of a newer server, and says what to do', async () => {
    const db = new DatabaseSync(':memory:');
    db.exec(`PRAGMA application_id = ${APPLICATION_ID}; PRAGMA user_version = 99`);
    const error = await rejection(migrateSqlite(db, '/data/mci.db'));
    expect(error).toMatchObject({ name: 'StoreError', code: 'STORE_TOO_NEW', path: '/data/mci.db' });
    expect(error.message).toBe(
      `the process database /data/mci.db has schema version 99, newer than this server supports (${SCHEMA_VERSION}); upgrade mci, or pass another --db`,
    );
  });

  it('rolls a failing migration back', async () => {
    const db = new DatabaseSync(':memory:');
    await migrateSqlite(db);
    await expect(migrateSqlite(db, ':memory:', [...MIGRATIONS, FAILING])).rejects.toThrow('step failed');
    expect(pragmaRows(db, 'user_version')).toEqual([{ user_version: SCHEMA_VERSION }]);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'halfway'").get()).toBeUndefined();
    expect(db.isTransaction).toBe(false);
  });
});

// ------------------------------------------------------------------------------------ PostgreSQL

/** Runs `body` with a Kysely on the database at `url`. */
async function withKysely<T>(url: string, body: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const pool = postgresPool(url);
  const db = postgresKysely(pool);
  try {
    return await body(db);
  } finally {
    await db.destroy();
    await pool.end();
  }
}

const migratePg = (url: string, migrations?: readonly Migration[]) =>
  withKysely(url, (db) => migrate(db, POSTGRES, url, migrations));

async function withClient<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/**
 * What PostgreSQL knows of the schema: columns (type, nullability, default), indexes, constraints,
 * sequences, the functions of the schema and the `counters` and `mci_schema` rows.
 */
function postgresSchema(url: string) {
  return withClient(url, async (client) => {
    const rows = async (text: string) => (await client.query(text)).rows as Row[];
    return {
      columns: await rows(`
        SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default
          FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
      indexes: await rows(
        `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`,
      ),
      constraints: await rows(`
        SELECT conrelid::regclass::text AS "table", conname, contype, pg_get_constraintdef(oid) AS def
          FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY conname`),
      sequences: await rows(`
        SELECT sequence_name, data_type, start_value, increment, pg_get_serial_sequence('chat_messages', 'id') AS owned
          FROM information_schema.sequences WHERE sequence_schema = 'public' ORDER BY sequence_name`),
      functions: await rows(`
        SELECT proname, pg_get_function_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result,
               l.lanname, p.provolatile, p.prosrc
          FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE pronamespace = 'public'::regnamespace ORDER BY proname`),
      counters: await rows('SELECT name, value FROM counters ORDER BY name'),
      version: await rows('SELECT one, version FROM mci_schema'),
    };
  });
}

/** A digest of every row of every table of the schema. */
/** Count and digest of every table's rows, leaving out the columns `without` names per table. */
function postgresRows(url: string, without: Record<string, string[]> = {}) {
  return withClient(url, async (client) => {
    const { rows: tables } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    const digests: Record<string, unknown> = {};
    for (const { tablename } of tables) {
      const { rows: columns } = await client.query<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        [tablename],
      );
      const kept = columns.map((c) => c.column_name).filter((c) => !without[tablename]?.includes(c));
      const { rows } = await client.query(
        `SELECT count(*) AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS digest FROM (SELECT ${kept.map(quoted).join(', ')} FROM ${quoted(tablename)}) t`,
      );
      digests[tablename] = rows[0];
    }
    return digests;
  });
}

/** A fresh database holding the schema-6 PostgreSQL fixture (a pg_dump, restored with psql). */
async function postgresFixture() {
  const fixture = await freshDatabase();
  execFileSync(
    'psql',
    ['-v', 'ON_ERROR_STOP=1', '-q', '-d', fixture.url, '-f', join(FIXTURES, 'postgres.sql')],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return fixture;
}

let fixtureStructure: ReturnType<typeof readFixtureStructure> | undefined;

/**
 * The schema of the schema-6 PostgreSQL fixture, without its `counters` (the records' pids and
 * seqs): restored and read once per file, the fixture being the same for every test.
 */
function postgresFixtureStructure() {
  fixtureStructure ??= readFixtureStructure();
  return fixtureStructure;
}

async function readFixtureStructure() {
  await using fixture = await postgresFixture();
  const { counters: _, ...structure } = await postgresSchema(fixture.url);
  return structure;
}

describe('PostgreSQL', () => {
  it('builds the schema of the schema-6 fixture', async () => {
    await using built = await freshDatabase();
    expect(await migratePg(built.url, SCHEMA_6)).toEqual({ from: 0, to: 6 });
    const { counters, ...schema } = await postgresSchema(built.url);
    expect(schema).toEqual(await postgresFixtureStructure());
    expect(counters).toEqual([
      { name: 'pid', value: '0' },
      { name: 'pos', value: '0' },
      { name: 'seq', value: '0' },
    ]);
    expect(schema.version).toEqual([{ one: true, version: 6 }]);
    expect(schema.functions.map((f) => f.proname)).toEqual(['mci_check_lease']);
    expect(schema.indexes.find((i) => i.indexname === 'processes_live')?.indexdef).toBe(
      "CREATE INDEX processes_live ON public.processes USING btree (node) WHERE (state <> 'idle'::text)",
    );
  });

  it('fills processes.stored_bytes at version 4 with the sizes of outputs and logs', async () => {
    await using db = await freshDatabase();
    expect(await migratePg(db.url, MIGRATIONS.slice(0, 3))).toEqual({ from: 0, to: 3 });
    await adminQueryOn(
      db.url,
      [V3_ROWS.processes, V3_ROWS.outputs((hex) => `decode('${hex}', 'hex')`), V3_ROWS.logs].join(';\n'),
    );
    expect(await migratePg(db.url, SCHEMA_6)).toEqual({ from: 3, to: 6 });
    const bytes = await withKysely(db.url, (kysely) =>
      kysely.selectFrom('processes').select(['pid', 'stored_bytes']).orderBy('pid').execute(),
    );
    expect(bytes).toEqual(expectedBytes);
    const { counters: _, ...structure } = await postgresSchema(db.url);
    expect(structure).toEqual(await postgresFixtureStructure());
  });

  it('opens the schema-6 fixture with the schema-6 migrations and changes nothing, then migrates it', async () => {
    await using fixture = await postgresFixture();
    const schema = await postgresSchema(fixture.url);
    const rows = await postgresRows(fixture.url);
    expect(await migratePg(fixture.url, SCHEMA_6)).toEqual({ from: 6, to: 6 });
    expect(await postgresSchema(fixture.url)).toEqual(schema);
    expect(await postgresRows(fixture.url)).toEqual(rows);
    // Then to this version: every row stays; the new tables are empty.
    expect(await migratePg(fixture.url)).toEqual({ from: 6, to: SCHEMA_VERSION });
    const empty = { n: '0', digest: expect.any(String) };
    expect(await postgresRows(fixture.url, ADDED_COLUMNS)).toEqual({
      ...rows,
      mci_schema: expect.anything(),
      policies: empty,
      approvals: empty,
      run_delivered: empty,
      calls: empty,
      run_files: empty,
      quota_windows: empty,
      sessions: empty,
      state: empty,
      skills: empty,
      skill_versions: empty,
    });
  });

  it('refuses a database of a newer server, and says what to do on every node', async () => {
    await using db = await freshDatabase();
    await migratePg(db.url);
    await withClient(db.url, (client) => client.query('UPDATE mci_schema SET version = 99'));
    const error = await rejection(migratePg(db.url));
    expect(error).toMatchObject({ name: 'StoreError', code: 'STORE_TOO_NEW', path: db.url });
    expect(error.message).toBe(
      `the process database ${db.url} has schema version 99, newer than this server supports (${SCHEMA_VERSION}); upgrade mci on every node, or pass another --db`,
    );
  });

  it('migrates a new database once when two servers start at the same time', async () => {
    await using db = await freshDatabase();
    await using alone = await freshDatabase();
    const results = await Promise.all([migratePg(db.url), migratePg(db.url), migratePg(db.url)]);
    for (const result of results) expect(result.to).toBe(SCHEMA_VERSION);
    await migratePg(alone.url);
    expect(await postgresSchema(db.url)).toEqual(await postgresSchema(alone.url));
  });

  it('rolls a failing migration back', async () => {
    await using db = await freshDatabase();
    await migratePg(db.url);
    await expect(migratePg(db.url, [...MIGRATIONS, FAILING])).rejects.toThrow('step failed');
    const schema = await postgresSchema(db.url);
    expect(schema.version).toEqual([{ one: true, version: SCHEMA_VERSION }]);
    expect(schema.columns.some((c) => c.table_name === 'halfway')).toBe(false);
  });
});
