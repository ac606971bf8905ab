import { DatabaseSync } from 'node:sqlite';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../../test/support/postgres.ts';
import { readCalls } from '../store/sql/call-reads.ts';
import { postgresKysely, postgresPool, sqliteKysely } from '../store/sql/connect.ts';
import { type Engine, POSTGRES, SQLITE } from '../store/sql/engine.ts';
import { MIGRATIONS, migrate } from '../store/sql/migrations.ts';
import type { Database } from '../store/sql/tables.ts';
import { inputHashOf, replayOf } from './call-record.ts';

// A run suspended by a server of schema version 9 kept its calls as one JSON log in `run_calls`; the
// step to version 10 turns that log into one record per call, which the resumed run replays exactly.

const BODY = Buffer.from('{"rate":1.1}').toString('base64');
const LOG = [
  {
    name: 'lookup',
    input: { q: 'invoices' },
    ok: true,
    value: { content: [{ type: 'text', text: '3 due' }] },
  },
  {
    name: 'fetch',
    input: { method: 'GET', url: 'https://api.example.com/rates' },
    ok: true,
    value: {
      status: 200,
      statusText: 'OK',
      url: 'https://api.example.com/rates',
      headers: [['content-type', 'application/json']],
      body: BODY,
    },
  },
  null,
  {
    name: 'wipe',
    input: {},
    ok: false,
    value: { message: 'wipe is denied by policy rule 1', code: 'POLICY_DENIED' },
  },
];

async function suspendedAtVersion9ThenMigrated(db: Kysely<Database>, engine: Engine): Promise<void> {
  await migrate(db, engine, 'test', MIGRATIONS.slice(0, 9));
  // biome-ignore lint/suspicious/noExplicitAny: the table of version 9, gone from today's `Database`.
  await (db as Kysely<any>)
    .insertInto('run_calls')
    .values({
      pid: 7,
      run: 2,
      calls: JSON.stringify(LOG),
      delivered: JSON.stringify({ outputs: 1, stdout: 0, stderr: 0, tools: 1 }),
    })
    .execute();
  await migrate(db, engine, 'test', MIGRATIONS.slice(0, 10));
}

async function expectRecords(db: Kysely<Database>): Promise<void> {
  const calls = await readCalls(db, 7, 2, -1);
  expect(calls.map((call) => [call.position, call.kind, call.name, call.ok])).toEqual([
    [0, 'tool', 'lookup', true],
    [1, 'fetch', 'fetch', true],
    [3, 'tool', 'wipe', false],
  ]);
  for (const call of calls) {
    const logged = LOG[call.position]!;
    expect(call.inputHash).toBe(inputHashOf(logged.input));
    expect(call.input).toEqual(logged.input);
    expect(replayOf(call)).toEqual({ resolved: logged.ok, value: logged.value });
  }
  expect(calls[1]!.result).toMatchObject({ status: 200, bytes: 12, contentTypes: ['application/json'] });
  expect(calls[2]!.error).toEqual({ message: 'wipe is denied by policy rule 1', code: 'POLICY_DENIED' });
  const delivered = await db.selectFrom('run_delivered').selectAll().execute();
  expect(delivered).toEqual([{ pid: 7, run: 2, delivered: '{"outputs":1,"stdout":0,"stderr":0,"tools":1}' }]);
}

describe('the call logs of runs suspended before the audit', () => {
  it('become one record per call (SQLite)', async () => {
    const db = sqliteKysely(new DatabaseSync(':memory:'));
    try {
      await suspendedAtVersion9ThenMigrated(db, SQLITE);
      await expectRecords(db);
    } finally {
      await db.destroy();
    }
  });

  it('become one record per call (PostgreSQL)', async () => {
    await using database = await freshDatabase();
    const pool = postgresPool(database.url);
    const db = postgresKysely(pool);
    try {
      await suspendedAtVersion9ThenMigrated(db, POSTGRES);
      await expectRecords(db);
    } finally {
      await db.destroy();
      await pool.end();
    }
  });
});
