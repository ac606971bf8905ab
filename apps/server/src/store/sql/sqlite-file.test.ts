import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, type Migration, SCHEMA_VERSION } from './migrations.ts';
import { openSqliteStore } from './open-sqlite.ts';
import { APPLICATION_ID } from './schema-ledger.ts';
import { openDatabase } from './sqlite-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'mci-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const failure = async (fn: () => Promise<unknown>) => {
  try {
    await fn();
  } catch (error) {
    return error as { code: string; message: string; path: string };
  }
  throw new Error('expected a StoreError');
};

describe('opening the process database', async () => {
  it('creates the directory and the schema, in WAL mode', async () => {
    const path = join(dir, 'new', 'nested', 'mci.db');
    const { db, schema, path: opened, close } = await openDatabase(path);
    expect(opened).toBe(path);
    expect(schema).toEqual({ from: 0, to: SCHEMA_VERSION });
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('PRAGMA application_id').get()).toEqual({ application_id: APPLICATION_ID });
    close();
  });

  it('refuses a file that is not an SQLite database', async () => {
    const path = join(dir, 'corrupt.db');
    writeFileSync(path, 'not a database, just text\n'.repeat(100));
    const error = await failure(() => openSqliteStore({ path }));
    expect(error).toMatchObject({ name: 'StoreError', code: 'STORE_CORRUPT', path });
    expect(error.message).toContain(`the process database ${path} is corrupt or not an SQLite database`);
  });

  it('refuses a path it cannot create or write', async () => {
    writeFileSync(join(dir, 'a-file'), 'x');
    const underFile = join(dir, 'a-file', 'mci.db');
    expect(await failure(() => openSqliteStore({ path: underFile }))).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(
        /^cannot create the directory \S+a-file of the process database \S+a-file\/mci\.db \(EEXIST/,
      ),
    });
    const directory = join(dir, 'a-directory');
    mkdirSync(directory);
    expect(await failure(() => openSqliteStore({ path: directory }))).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining(`cannot open the process database ${directory} for writing`),
    });
  });

  it('refuses an SQLite database of another application', async () => {
    const path = join(dir, 'foreign.db');
    const other = new DatabaseSync(path);
    other.exec('CREATE TABLE notes (text TEXT)');
    other.close();
    expect(await failure(() => openSqliteStore({ path }))).toMatchObject({
      code: 'STORE_FOREIGN',
      message: `${path} is an SQLite database of another application, not an MCI process database; pass another --db`,
    });
  });

  it('refuses a database written by a newer server, and leaves it untouched', async () => {
    const path = join(dir, 'newer.db');
    (await openDatabase(path)).close();
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA user_version = 99');
    raw.close();
    expect(await failure(() => openSqliteStore({ path }))).toMatchObject({
      code: 'STORE_TOO_NEW',
      message: `the process database ${path} has schema version 99, newer than this server supports (${SCHEMA_VERSION}); upgrade mci, or pass another --db`,
    });
    const check = new DatabaseSync(path);
    expect(check.prepare('PRAGMA user_version').get()).toEqual({ user_version: 99 });
    check.close();
  });

  it('refuses a database another server holds', async () => {
    const path = join(dir, 'held.db');
    const holder = await openSqliteStore({ path });
    expect(await failure(() => openSqliteStore({ path, busyTimeoutMs: 50 }))).toMatchObject({
      code: 'STORE_LOCKED',
      message: `the process database ${path} is in use by another process (another mci serve?); stop it or pass another --db`,
    });
    await holder.close();
    const next = await openSqliteStore({ path });
    await next.close();
  });

  it('applies only the pending migrations, in order, each with its version', async () => {
    const path = join(dir, 'migrated.db');
    (await openDatabase(path)).close();
    const applied: number[] = [];
    const extra = (version: number): Migration => ({
      version,
      description: `test step ${version}`,
      async up(db) {
        applied.push(version);
        await sql.raw(`CREATE TABLE step_${version} (x)`).execute(db);
      },
    });
    const v = SCHEMA_VERSION;
    const first = await openDatabase(path, { migrations: [...MIGRATIONS, extra(v + 1), extra(v + 2)] });
    expect(first.schema).toEqual({ from: v, to: v + 2 });
    expect(applied).toEqual([v + 1, v + 2]);
    first.close();
    const again = await openDatabase(path, { migrations: [...MIGRATIONS, extra(v + 1), extra(v + 2)] });
    expect(again.schema).toEqual({ from: v + 2, to: v + 2 });
    expect(applied).toEqual([v + 1, v + 2]);
    again.close();
  });

  it('rolls back a failing migration, so the version stays where it was', async () => {
    const path = join(dir, 'failing.db');
    (await openDatabase(path)).close();
    const broken: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'broken',
      async up(db) {
        await sql.raw('CREATE TABLE half_done (x)').execute(db);
        throw new Error('step failed');
      },
    };
    await expect(openDatabase(path, { migrations: [...MIGRATIONS, broken] })).rejects.toThrow(/step failed/);
    const { db, schema, close } = await openDatabase(path);
    expect(schema.from).toBe(SCHEMA_VERSION);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'half_done'").get()).toBeUndefined();
    close();
  });
});
