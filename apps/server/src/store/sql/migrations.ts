import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import { legacyCallRows } from '../../audit/legacy-call-log.ts';
import { StoreError } from '../store-error.ts';
import type { Engine } from './engine.ts';
import { ledgerOf } from './schema-ledger.ts';
import type { Database } from './tables.ts';

/** One step of the schema; `version` n turns a version n-1 database into a version n one. */
export interface Migration {
  version: number;
  description: string;
  /** Changes the schema of `db` (a transaction) for `engine`. */
  // biome-ignore lint/suspicious/noExplicitAny: a step sees the tables of its version, not today's `Database`.
  up(db: Kysely<any>, engine: Engine): Promise<void>;
}

/**
 * SQLite keeps a table whose key is not one integer in the b-tree of that key (`WITHOUT ROWID`);
 * PostgreSQL has no such choice.
 * @see https://sqlite.org/withoutrowid.html
 */
function withoutRowid<T extends CreateTableBuilder<string, string>>(engine: Engine, table: T): T {
  return engine.kind === 'sqlite' ? (table.modifyEnd(sql`without rowid`) as T) : table;
}

/**
 * Refuses a node whose lease ended (cluster writes call it first). The body's text, indentation
 * included, is the one `pg_proc.prosrc` holds in databases at version 6.
 */
const CHECK_LEASE = sql`CREATE FUNCTION mci_check_lease(node text) RETURNS void LANGUAGE plpgsql AS $fn$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM nodes WHERE name = node AND stopped_at IS NULL FOR SHARE) THEN
            RAISE EXCEPTION 'mci: node lease lost';
          END IF;
        END $fn$`;

/**
 * The schema for every engine, versioned in code (column types from `engine.types`). Append a
 * migration to change it; never edit a released one.
 *
 * Output values and log text live in `outputs` and `logs` with their event `seq`; the `events` table
 * holds the other events, and `output`/`log` events are rebuilt from those two tables on replay, so no
 * output is stored twice. `processes.stored_bytes` is the size of a process's `outputs` values plus its
 * `logs` texts (UTF-8), kept by the store as it writes and deletes them.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'processes, runs, outputs, logs, events, counters',
    async up(db, engine) {
      const { id, blob, real } = engine.types;
      await db.schema
        .createTable('processes')
        .addColumn('pid', id, (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('lang', 'text', (c) => c.notNull())
        .addColumn('ref', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('timeout_ms', 'integer', (c) => c.notNull())
        .addColumn('memory_limit_mb', 'integer', (c) => c.notNull())
        .addColumn('metadata', 'text')
        .addColumn('stream_id', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('status', 'text')
        .addColumn('runs', 'integer', (c) => c.notNull())
        .addColumn('idle_since', id, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('processes_owner').on('processes').columns(['owner', 'pid']).execute();
      await db.schema
        .createIndex('processes_ref')
        .on('processes')
        .columns(['ref', 'pid'])
        .where('ref', 'is not', null)
        .execute();
      await db.schema.createIndex('processes_idle_since').on('processes').column('idle_since').execute();
      await withoutRowid(
        engine,
        db.schema
          .createTable('runs')
          .addColumn('pid', id, (c) => c.notNull())
          .addColumn('run', 'integer', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('status', 'text')
          .addColumn('queued_at', 'text')
          .addColumn('started_at', 'text')
          .addColumn('ended_at', 'text')
          .addColumn('duration_ms', real)
          .addColumn('error', 'text')
          .addColumn('truncated', 'integer')
          .addPrimaryKeyConstraint('runs_pkey', ['pid', 'run']),
      ).execute();
      await db.schema
        .createTable('outputs')
        .addColumn('seq', id, (c) => c.primaryKey())
        .addColumn('pid', id, (c) => c.notNull())
        .addColumn('run', 'integer', (c) => c.notNull())
        .addColumn('value', blob, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('outputs_run').on('outputs').columns(['pid', 'run']).execute();
      await db.schema
        .createTable('logs')
        .addColumn('seq', id, (c) => c.primaryKey())
        .addColumn('pid', id, (c) => c.notNull())
        .addColumn('run', 'integer', (c) => c.notNull())
        .addColumn('stream', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('logs_run').on('logs').columns(['pid', 'run']).execute();
      await db.schema
        .createTable('events')
        .addColumn('seq', id, (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('pid', id)
        .addColumn('ref', 'text')
        .addColumn('stream_id', 'text')
        .addColumn('at', id, (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('events_pid')
        .on('events')
        .column('pid')
        .where('pid', 'is not', null)
        .execute();
      await db.schema
        .createIndex('events_unowned_at')
        .on('events')
        .column('at')
        .where(sql.ref('pid'), 'is', null)
        .execute();
      await withoutRowid(
        engine,
        db.schema
          .createTable('counters')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('value', id, (c) => c.notNull()),
      ).execute();
      await db
        .insertInto('counters')
        .values([
          { name: 'pid', value: 0 },
          { name: 'seq', value: 0 },
        ])
        .execute();
    },
  },
  {
    version: 2,
    description: 'conversations and their messages (server-hosted chat)',
    async up(db, engine) {
      await db.schema
        .createTable('conversations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('conversations_owner')
        .on('conversations')
        .columns(['owner', 'updated_at'])
        .execute();
      // Message ids the database assigns, never reused: SQLite's AUTOINCREMENT rowid, PostgreSQL's bigserial.
      const sqlite = engine.kind === 'sqlite';
      await db.schema
        .createTable('chat_messages')
        .addColumn('id', sqlite ? 'integer' : 'bigserial', (c) =>
          sqlite ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('conversation_id', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('step', 'integer')
        .addColumn('pids', 'text', (c) => c.notNull())
        .addColumn('input_tokens', 'integer')
        .addColumn('output_tokens', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('chat_messages_conversation')
        .on('chat_messages')
        .columns(['conversation_id', 'id'])
        .execute();
    },
  },
  {
    version: 3,
    description: 'a conversation runs its blocks automatically (1) or on a run signal (0)',
    async up(db) {
      await db.schema
        .alterTable('conversations')
        .addColumn('autorun', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    },
  },
  {
    version: 4,
    description: 'processes.stored_bytes: bytes of the outputs and logs of a process (for retention)',
    async up(db, engine) {
      await db.schema
        .alterTable('processes')
        .addColumn('stored_bytes', engine.types.id, (c) => c.notNull().defaultTo(0))
        .execute();
      const data = db
        .selectFrom('outputs')
        .select(['pid', engine.byteLength(sql.ref('value')).as('n')])
        .unionAll(db.selectFrom('logs').select(['pid', engine.byteLength(sql.ref('text')).as('n')]));
      const sizes = db
        .selectFrom(data.as('data'))
        .select(['pid', (eb) => eb.fn.sum('n').as('bytes')])
        .groupBy('pid');
      await db
        .updateTable('processes')
        .from(sizes.as('sizes'))
        .set((eb) => ({ stored_bytes: eb.ref('sizes.bytes') }))
        .whereRef('sizes.pid', '=', 'processes.pid')
        .execute();
    },
  },
  {
    version: 5,
    description: 'node leases (used by servers sharing a PostgreSQL database; empty in SQLite)',
    async up(db, engine) {
      const { time } = engine.types;
      await db.schema
        .createTable('nodes')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('started_at', time, (c) => c.notNull())
        .addColumn('renewed_at', time, (c) => c.notNull())
        .addColumn('lease_until', time, (c) => c.notNull())
        .addColumn('stopped_at', time)
        .addColumn('stopped_by', 'text')
        .execute();
    },
  },
  {
    version: 6,
    description:
      'processes.node and the event log positions (used by servers sharing a PostgreSQL database; unused in SQLite)',
    async up(db, engine) {
      await db.schema.alterTable('processes').addColumn('node', 'text').execute();
      await db.schema
        .createTable('event_log')
        .addColumn('pos', engine.types.id, (c) => c.primaryKey())
        .addColumn('seq', engine.types.id, (c) => c.notNull())
        .addColumn('node', 'text', (c) => c.notNull())
        .execute();
      // PostgreSQL only: what a cluster reads and locks (its live processes, event positions by seq,
      // the `pos` counter, the lease check). SQLite databases at version 6 have none of these.
      if (engine.kind === 'postgres') {
        await db.schema
          .createIndex('processes_live')
          .on('processes')
          .column('node')
          .where(sql.ref('state'), '<>', 'idle')
          .execute();
        await db.schema.createIndex('event_log_seq').on('event_log').column('seq').execute();
        await db
          .insertInto('counters')
          .values({ name: 'pos', value: 0 })
          .onConflict((c) => c.column('name').doNothing())
          .execute();
        await CHECK_LEASE.execute(db);
      }
    },
  },
  {
    version: 7,
    description: 'policies, approvals and the call logs of suspended runs (docs/approvals.md)',
    async up(db, engine) {
      const { id } = engine.types;
      await db.schema
        .createTable('policies')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('rules', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('pid', id, (c) => c.notNull())
        .addColumn('run', 'integer', (c) => c.notNull())
        .addColumn('principal', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('tool', 'text')
        .addColumn('input', 'text')
        .addColumn('method', 'text')
        .addColumn('url', 'text')
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('decided_at', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('reason', 'text')
        .addColumn('resumed', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('approvals_pid').on('approvals').columns(['pid', 'run']).execute();
      await db.schema
        .createIndex('approvals_state')
        .on('approvals')
        .columns(['state', 'expires_at'])
        .execute();
      await withoutRowid(
        engine,
        db.schema
          .createTable('run_calls')
          .addColumn('pid', id, (c) => c.notNull())
          .addColumn('run', 'integer', (c) => c.notNull())
          .addColumn('calls', 'text', (c) => c.notNull())
          .addColumn('delivered', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('run_calls_pk', ['pid', 'run']),
      ).execute();
    },
  },
  {
    version: 8,
    description: 'the type check: processes.check (its mode) and runs.warnings (docs/sandbox.md)',
    async up(db) {
      await db.schema.alterTable('processes').addColumn('check', 'text').execute();
      await db.schema.alterTable('runs').addColumn('warnings', 'text').execute();
    },
  },
  {
    version: 9,
    description: 'run_files: the files programs made with output.file() (docs/sandbox.md)',
    async up(db, engine) {
      const { id, blob } = engine.types;
      await withoutRowid(
        engine,
        db.schema
          .createTable('run_files')
          .addColumn('pid', id, (c) => c.notNull())
          .addColumn('run', 'integer', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('mime_type', 'text', (c) => c.notNull())
          .addColumn('data', blob, (c) => c.notNull())
          .addPrimaryKeyConstraint('run_files_pk', ['pid', 'run', 'name']),
      ).execute();
    },
  },
  {
    version: 10,
    description: 'calls: the audit of every tool call and fetch of runs, which resumed runs replay (docs/operations.md)',
    async up(db, engine) {
      const { id } = engine.types;
      await withoutRowid(
        engine,
        db.schema
          .createTable('calls')
          .addColumn('pid', id, (c) => c.notNull())
          .addColumn('run', 'integer', (c) => c.notNull())
          .addColumn('position', 'integer', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('input_hash', 'text', (c) => c.notNull())
          .addColumn('replay', 'text')
          .addPrimaryKeyConstraint('calls_pk', ['pid', 'run', 'position']),
      ).execute();
      // The call logs of runs suspended before this version become their calls' records.
      const logs: Array<{ pid: number; run: number; calls: string }> = await db
        .selectFrom('run_calls')
        .select(['pid', 'run', 'calls'])
        .execute();
      for (const log of logs) {
        const rows = legacyCallRows(log.pid, log.run, JSON.parse(log.calls));
        if (rows.length > 0) await db.insertInto('calls').values(rows).execute();
      }
      await db.schema.alterTable('run_calls').dropColumn('calls').execute();
      await db.schema.alterTable('run_calls').renameTo('run_delivered').execute();
    },
  },
  {
    version: 11,
    description:
      'quota_windows: runs and CPU ms per principal and minute, counted by a cluster (docs/cluster.md)',
    async up(db, engine) {
      const { id } = engine.types;
      await withoutRowid(
        engine,
        db.schema
          .createTable('quota_windows')
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('window_start', id, (c) => c.notNull())
          .addColumn('runs', 'integer', (c) => c.notNull())
          .addColumn('cpu_ms', id, (c) => c.notNull())
          .addPrimaryKeyConstraint('quota_windows_pk', ['owner', 'window_start']),
      ).execute();
    },
  },
  {
    version: 12,
    description:
      'sessions and state: the sessions of a principal, the session of each process, and the durable key-value state of a session (docs/sessions.md)',
    async up(db, engine) {
      const { id } = engine.types;
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('created_at', id, (c) => c.notNull())
        .addColumn('updated_at', id, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('sessions_owner')
        .on('sessions')
        .columns(['owner', 'created_at', 'id'])
        .execute();
      await db.schema.alterTable('processes').addColumn('session', 'text').execute();
      await db.schema.createIndex('processes_session').on('processes').columns(['session', 'pid']).execute();
      await withoutRowid(
        engine,
        db.schema
          .createTable('state')
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('bytes', 'integer', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('expires_at', id)
          .addColumn('updated_at', id, (c) => c.notNull())
          .addPrimaryKeyConstraint('state_pk', ['scope', 'key']),
      ).execute();
      await db.schema.createIndex('state_expires_at').on('state').column('expires_at').execute();
    },
  },
  {
    version: 13,
    description:
      'skills: saved TypeScript functions of a principal, every saved version kept (docs/sessions.md, "Skills")',
    async up(db, engine) {
      const { id } = engine.types;
      await withoutRowid(
        engine,
        db.schema
          .createTable('skills')
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('latest', 'integer', (c) => c.notNull())
          .addColumn('created_at', id, (c) => c.notNull())
          .addPrimaryKeyConstraint('skills_pk', ['owner', 'name']),
      ).execute();
      await db.schema.createIndex('skills_owner').on('skills').columns(['owner', 'created_at', 'name']).execute();
      await withoutRowid(
        engine,
        db.schema
          .createTable('skill_versions')
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('description', 'text', (c) => c.notNull())
          .addColumn('input_schema', 'text', (c) => c.notNull())
          .addColumn('code', 'text', (c) => c.notNull())
          .addColumn('js', 'text', (c) => c.notNull())
          .addColumn('created_at', id, (c) => c.notNull())
          .addColumn('created_by', id)
          .addPrimaryKeyConstraint('skill_versions_pk', ['owner', 'name', 'version']),
      ).execute();
    },
  },
  {
    version: 14,
    description: 'paging indexes: approvals by principal and id, conversations by owner and creation (docs/protocol.md)',
    async up(db) {
      await db.schema
        .createIndex('approvals_principal')
        .on('approvals')
        .columns(['principal', 'id'])
        .execute();
      await db.schema
        .createIndex('conversations_owner_created')
        .on('conversations')
        .columns(['owner', 'created_at', 'id'])
        .execute();
    },
  },
];

/** The schema version this server writes. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Brings the database to the latest version of `migrations`, one transaction per step (a failing
 * step is rolled back and thrown). Each step reads the version again in its transaction and is
 * skipped when another server did it meanwhile. Errors of the database itself are thrown as they are.
 * @param label the SQLite path or the PostgreSQL URL (without its password), named in messages.
 * @param migrations the steps to apply. @default {@link MIGRATIONS}
 * @returns the version found and the version now.
 * @throws StoreError `STORE_TOO_NEW` for a database of a newer server, `STORE_FOREIGN` for an SQLite
 * database of something else.
 */
export async function migrate(
  db: Kysely<Database>,
  engine: Engine,
  label: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<{ from: number; to: number }> {
  const ledger = ledgerOf(engine);
  const latest = migrations.at(-1)?.version ?? 0;
  const from = await ledger.found(db, label);
  if (from > latest) {
    throw new StoreError(
      'STORE_TOO_NEW',
      label,
      `the process database ${label} has schema version ${from}, newer than this server supports (${latest}); ${ledger.advice}`,
    );
  }
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    await db.transaction().execute(async (trx) => {
      if ((await ledger.lock(trx)) >= migration.version) return;
      await migration.up(trx, engine);
      await ledger.record(trx, migration.version);
    });
  }
  return { from, to: Math.max(from, latest) };
}
