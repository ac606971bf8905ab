import type { DatabaseSync } from 'node:sqlite';
import { StoreError } from './store-error.ts';

/** `PRAGMA application_id` of an MCI process database ("MCI1"), so a foreign SQLite file is refused. */
export const APPLICATION_ID = 0x4d434931;

/** One step of the schema; `version` n turns a version n-1 database into a version n one. */
export interface Migration {
  version: number;
  description: string;
  up(db: DatabaseSync): void;
}

/**
 * The schema, versioned in code. Append a migration to change it; never edit a released one.
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
    up(db) {
      db.exec(`
        CREATE TABLE processes (
          pid INTEGER PRIMARY KEY,
          owner TEXT NOT NULL,
          code TEXT NOT NULL,
          lang TEXT NOT NULL,
          ref TEXT,
          created_at TEXT NOT NULL,
          timeout_ms INTEGER NOT NULL,
          memory_limit_mb INTEGER NOT NULL,
          metadata TEXT,
          stream_id TEXT,
          state TEXT NOT NULL,
          status TEXT,
          runs INTEGER NOT NULL,
          idle_since INTEGER NOT NULL
        );
        CREATE INDEX processes_owner ON processes (owner, pid);
        CREATE INDEX processes_ref ON processes (ref, pid) WHERE ref IS NOT NULL;
        CREATE INDEX processes_idle_since ON processes (idle_since);
        CREATE TABLE runs (
          pid INTEGER NOT NULL,
          run INTEGER NOT NULL,
          state TEXT NOT NULL,
          status TEXT,
          queued_at TEXT,
          started_at TEXT,
          ended_at TEXT,
          duration_ms REAL,
          error TEXT,
          truncated INTEGER,
          PRIMARY KEY (pid, run)
        ) WITHOUT ROWID;
        CREATE TABLE outputs (
          seq INTEGER PRIMARY KEY,
          pid INTEGER NOT NULL,
          run INTEGER NOT NULL,
          value BLOB NOT NULL
        );
        CREATE INDEX outputs_run ON outputs (pid, run);
        CREATE TABLE logs (
          seq INTEGER PRIMARY KEY,
          pid INTEGER NOT NULL,
          run INTEGER NOT NULL,
          stream TEXT NOT NULL,
          text TEXT NOT NULL
        );
        CREATE INDEX logs_run ON logs (pid, run);
        CREATE TABLE events (
          seq INTEGER PRIMARY KEY,
          owner TEXT NOT NULL,
          pid INTEGER,
          ref TEXT,
          stream_id TEXT,
          at INTEGER NOT NULL,
          body TEXT NOT NULL
        );
        CREATE INDEX events_pid ON events (pid) WHERE pid IS NOT NULL;
        CREATE INDEX events_unowned_at ON events (at) WHERE pid IS NULL;
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO counters (name, value) VALUES ('pid', 0), ('seq', 0);
      `);
    },
  },
  {
    version: 2,
    description: 'conversations and their messages (server-hosted chat)',
    up(db) {
      db.exec(`
        CREATE TABLE conversations (
          id TEXT PRIMARY KEY,
          owner TEXT NOT NULL,
          title TEXT NOT NULL,
          model TEXT NOT NULL,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL
        );
        CREATE INDEX conversations_owner ON conversations (owner, updated_at);
        CREATE TABLE chat_messages (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          conversation_id TEXT NOT NULL,
          role TEXT NOT NULL,
          text TEXT NOT NULL,
          model TEXT,
          step INTEGER,
          pids TEXT NOT NULL,
          input_tokens INTEGER,
          output_tokens INTEGER,
          created_at TEXT NOT NULL
        );
        CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id, id);
      `);
    },
  },
  {
    version: 3,
    description: 'a conversation runs its blocks automatically (1) or on a run signal (0)',
    up(db) {
      db.exec('ALTER TABLE conversations ADD COLUMN autorun INTEGER NOT NULL DEFAULT 1;');
    },
  },
  {
    version: 4,
    description: 'processes.stored_bytes: bytes of the outputs and logs of a process (for retention)',
    up(db) {
      db.exec(`
        ALTER TABLE processes ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
        UPDATE processes SET stored_bytes = sizes.bytes
          FROM (
            SELECT pid, sum(n) AS bytes FROM (
              SELECT pid, length(value) AS n FROM outputs
              UNION ALL SELECT pid, length(CAST(text AS BLOB)) FROM logs
            ) GROUP BY pid
          ) AS sizes
         WHERE sizes.pid = processes.pid;
        `);
    },
  },
  {
    version: 5,
    description: 'node leases (used by servers sharing a PostgreSQL database; empty in SQLite)',
    up(db) {
      db.exec(`
        CREATE TABLE nodes (
          name TEXT PRIMARY KEY,
          started_at TEXT NOT NULL,
          renewed_at TEXT NOT NULL,
          lease_until TEXT NOT NULL,
          stopped_at TEXT,
          stopped_by TEXT
        );
      `);
    },
  },
  {
    version: 6,
    description:
      'processes.node and the event log positions (used by servers sharing a PostgreSQL database; unused in SQLite)',
    up(db) {
      db.exec(`
        ALTER TABLE processes ADD COLUMN node TEXT;
        CREATE TABLE event_log (
          pos INTEGER PRIMARY KEY,
          seq INTEGER NOT NULL,
          node TEXT NOT NULL
        );
      `);
    },
  },
];

/** The schema version this server writes. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Brings the database to {@link SCHEMA_VERSION}, one transaction per migration.
 * @returns the version found and the version now.
 * @throws StoreError `STORE_TOO_NEW` for a database of a newer server, `STORE_FOREIGN` for an SQLite
 * database of something else.
 */
export function migrate(
  db: DatabaseSync,
  path: string,
  migrations: readonly Migration[] = MIGRATIONS,
): { from: number; to: number } {
  const pragma = (name: string) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
  const from = pragma('user_version');
  const applicationId = pragma('application_id');
  const latest = migrations.at(-1)?.version ?? 0;
  const hasTables =
    db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' LIMIT 1").get() !== undefined;
  if (applicationId !== APPLICATION_ID && (applicationId !== 0 || hasTables)) {
    throw new StoreError(
      'STORE_FOREIGN',
      path,
      `${path} is an SQLite database of another application, not an MCI process database; pass another --db`,
    );
  }
  if (from > latest) {
    throw new StoreError(
      'STORE_TOO_NEW',
      path,
      `the process database ${path} has schema version ${from}, newer than this server supports (${latest}); ` +
        'upgrade mci, or pass another --db',
    );
  }
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      migration.up(db);
      db.exec(`PRAGMA user_version = ${migration.version}`);
      db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }
  return { from, to: Math.max(from, latest) };
}
