import { StoreError } from '../store-error.ts';
import type { PgBridge } from './pg-bridge.ts';

/** One step of the Postgres schema: the same `version` and meaning as the SQLite migration. */
export interface PgMigration {
  version: number;
  sql: string;
}

/**
 * The Postgres schema, version for version the schema of the SQLite store (`MIGRATIONS`; the
 * tables, columns and their meaning are the same, in Postgres types). Append a migration to both
 * lists to change the schema; never edit a released one.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE processes (
        pid bigint PRIMARY KEY,
        owner text NOT NULL,
        code text NOT NULL,
        lang text NOT NULL,
        ref text,
        created_at text NOT NULL,
        timeout_ms integer NOT NULL,
        memory_limit_mb integer NOT NULL,
        metadata text,
        stream_id text,
        state text NOT NULL,
        status text,
        runs integer NOT NULL,
        idle_since bigint NOT NULL
      );
      CREATE INDEX processes_owner ON processes (owner, pid);
      CREATE INDEX processes_ref ON processes (ref, pid) WHERE ref IS NOT NULL;
      CREATE INDEX processes_idle_since ON processes (idle_since);
      CREATE TABLE runs (
        pid bigint NOT NULL,
        run integer NOT NULL,
        state text NOT NULL,
        status text,
        queued_at text,
        started_at text,
        ended_at text,
        duration_ms double precision,
        error text,
        truncated integer,
        PRIMARY KEY (pid, run)
      );
      CREATE TABLE outputs (seq bigint PRIMARY KEY, pid bigint NOT NULL, run integer NOT NULL, value bytea NOT NULL);
      CREATE INDEX outputs_run ON outputs (pid, run);
      CREATE TABLE logs (
        seq bigint PRIMARY KEY, pid bigint NOT NULL, run integer NOT NULL, stream text NOT NULL, text text NOT NULL
      );
      CREATE INDEX logs_run ON logs (pid, run);
      CREATE TABLE events (
        seq bigint PRIMARY KEY,
        owner text NOT NULL,
        pid bigint,
        ref text,
        stream_id text,
        at bigint NOT NULL,
        body text NOT NULL
      );
      CREATE INDEX events_pid ON events (pid) WHERE pid IS NOT NULL;
      CREATE INDEX events_unowned_at ON events (at) WHERE pid IS NULL;
      CREATE TABLE counters (name text PRIMARY KEY, value bigint NOT NULL);
      INSERT INTO counters (name, value) VALUES ('pid', 0), ('seq', 0);`,
  },
  {
    version: 2,
    sql: `
      CREATE TABLE conversations (
        id text PRIMARY KEY,
        owner text NOT NULL,
        title text NOT NULL,
        model text NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL
      );
      CREATE INDEX conversations_owner ON conversations (owner, updated_at);
      CREATE TABLE chat_messages (
        id bigserial PRIMARY KEY,
        conversation_id text NOT NULL,
        role text NOT NULL,
        text text NOT NULL,
        model text,
        step integer,
        pids text NOT NULL,
        input_tokens integer,
        output_tokens integer,
        created_at text NOT NULL
      );
      CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id, id);`,
  },
  {
    version: 3,
    sql: 'ALTER TABLE conversations ADD COLUMN autorun integer NOT NULL DEFAULT 1;',
  },
  {
    version: 4,
    sql: `
      ALTER TABLE processes ADD COLUMN stored_bytes bigint NOT NULL DEFAULT 0;
      UPDATE processes p SET stored_bytes = sizes.bytes
        FROM (
          SELECT pid, sum(n) AS bytes FROM (
            SELECT pid, octet_length(value) AS n FROM outputs
            UNION ALL SELECT pid, octet_length(text) FROM logs
          ) data GROUP BY pid
        ) sizes
       WHERE sizes.pid = p.pid;`,
  },
  {
    version: 5,
    sql: `
      CREATE TABLE nodes (
        name text PRIMARY KEY,
        started_at timestamptz NOT NULL,
        renewed_at timestamptz NOT NULL,
        lease_until timestamptz NOT NULL,
        stopped_at timestamptz,
        stopped_by text
      );`,
  },
  {
    version: 6,
    sql: `
      ALTER TABLE processes ADD COLUMN node text;
      CREATE INDEX processes_live ON processes (node) WHERE state <> 'idle';
      CREATE TABLE event_log (
        pos bigint PRIMARY KEY,
        seq bigint NOT NULL,
        node text NOT NULL
      );
      CREATE INDEX event_log_seq ON event_log (seq);
      INSERT INTO counters (name, value) VALUES ('pos', 0) ON CONFLICT (name) DO NOTHING;
      CREATE FUNCTION mci_check_lease(node text) RETURNS void LANGUAGE plpgsql AS $fn$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM nodes WHERE name = node AND stopped_at IS NULL FOR SHARE) THEN
            RAISE EXCEPTION 'mci: node lease lost';
          END IF;
        END $fn$;`,
  },
];

/** The key of the advisory lock that serialises migrations of nodes starting together ("MCI1"). */
const MIGRATION_LOCK = 0x4d434931;

/**
 * Brings the database to the latest version of `migrations`, all pending steps in one transaction
 * under an advisory lock (nodes starting at once migrate one after another; the later ones find
 * nothing to do). The version lives in the one-row table `mci_schema`.
 * @returns the version found and the version now.
 * @throws StoreError `STORE_TOO_NEW` when the database has a newer schema than this server knows,
 * `STORE_UNAVAILABLE` when it cannot be read or migrated.
 */
export async function migratePostgres(
  bridge: PgBridge,
  migrations: readonly PgMigration[] = PG_MIGRATIONS,
): Promise<{ from: number; to: number }> {
  const latest = migrations.at(-1)?.version ?? 0;
  const [, , found] = await bridge.call(
    [
      { sql: 'SELECT pg_advisory_xact_lock($1)', params: [MIGRATION_LOCK] },
      {
        sql: 'CREATE TABLE IF NOT EXISTS mci_schema (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)',
        params: [],
      },
      { sql: 'SELECT version FROM mci_schema', params: [] },
    ],
    true,
  );
  const from = Number(found?.[0]?.version ?? 0);
  if (from > latest)
    throw new StoreError(
      'STORE_TOO_NEW',
      bridge.url,
      `the process database ${bridge.url} has schema version ${from}, newer than this server supports (${latest}); ` +
        'upgrade mci on every node, or pass another --db',
    );
  if (from === latest) return { from, to: latest };
  // Each step checks the version again under the lock: another node may have migrated meanwhile.
  const steps = migrations.map((m) => ({
    sql: `DO $mci$ BEGIN
            IF coalesce((SELECT version FROM mci_schema), 0) < ${m.version} THEN
              EXECUTE $step$${m.sql}$step$;
              INSERT INTO mci_schema (version) VALUES (${m.version})
                ON CONFLICT (one) DO UPDATE SET version = excluded.version;
            END IF;
          END $mci$`,
    params: [],
  }));
  await bridge.call([{ sql: 'SELECT pg_advisory_xact_lock($1)', params: [MIGRATION_LOCK] }, ...steps], true);
  return { from, to: latest };
}
