import type { Generated, Kysely, Transaction } from 'kysely';

// The tables of the process database as Kysely sees them, the same in SQLite and PostgreSQL. Column
// types are what both drivers answer: integers as numbers (PostgreSQL `bigint` is parsed as a
// number: every id and epoch-ms value stays below 2^53), bytes as `Uint8Array` (a `Buffer` from pg),
// booleans as 0/1 integers, times as ISO 8601 text (but the `nodes` lease times, PostgreSQL only).

/** One row per process. `stored_bytes`: bytes of its stored outputs (JSON) and logs (UTF-8). */
export interface ProcessesTable {
  pid: number;
  owner: string;
  code: string;
  lang: string;
  ref: string | null;
  created_at: string;
  timeout_ms: number;
  memory_limit_mb: number;
  /** JSON text of the process metadata. */
  metadata: string | null;
  stream_id: string | null;
  state: string;
  status: string | null;
  runs: number;
  /** ms since the epoch of its last change to idle (retention reads it). */
  idle_since: number;
  stored_bytes: Generated<number>;
  /** The cluster node that runs it (PostgreSQL clusters; null elsewhere). */
  node: string | null;
  /** Its check mode (`block`, `warn`, `off`); null: the server's. */
  check: string | null;
  /** The session it belongs to (`sessions.id`); null: none (its state is its own). */
  session: string | null;
}

/** One row per run of a process. */
export interface RunsTable {
  pid: number;
  run: number;
  state: string;
  status: string | null;
  queued_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  /** JSON text of the run's `RunError`. */
  error: string | null;
  /** 1 when outputs or logs were dropped past the run's limits. */
  truncated:
    | number
    | null /** JSON text of the run's check warnings (`CheckDiagnostic[]`), null when it has none. */;
  warnings: string | null;
}

/** Output values in the output encoding of `@mci/protocol` (UTF-8 JSON), keyed by their event seq. */
export interface OutputsTable {
  seq: number;
  pid: number;
  run: number;
  value: Uint8Array;
}

/** The files programs made with `output.file()`, one per name in a run. */
export interface RunFilesTable {
  pid: number;
  run: number;
  name: string;
  mime_type: string;
  data: Uint8Array;
}

/** Console text of runs, keyed by their event seq. */
export interface LogsTable {
  seq: number;
  pid: number;
  run: number;
  stream: string;
  text: string;
}

/** Every event but outputs and logs (rebuilt from their tables on replay), with its route. */
export interface EventsTable {
  seq: number;
  owner: string;
  pid: number | null;
  ref: string | null;
  stream_id: string | null;
  /** ms since the epoch. */
  at: number;
  /** JSON text of the event. */
  body: string;
}

/** Reserved id marks: `pid`, `seq`, and (clusters) `pos`, the last position in `event_log`. */
export interface CountersTable {
  name: string;
  value: number;
}

export interface ConversationsTable {
  id: string;
  owner: string;
  title: string;
  model: string;
  created_at: string;
  updated_at: string;
  autorun: Generated<number>;
}

export interface ChatMessagesTable {
  id: Generated<number>;
  conversation_id: string;
  role: string;
  text: string;
  model: string | null;
  step: number | null;
  /** JSON array of pids. */
  pids: string;
  input_tokens: number | null;
  output_tokens: number | null;
  created_at: string;
}

/** Node leases (PostgreSQL; times are `timestamptz`, empty in SQLite). */
export interface NodesTable {
  name: string;
  started_at: Date | string;
  renewed_at: Date | string;
  lease_until: Date | string;
  stopped_at: Date | string | null;
  stopped_by: string | null;
}

/** A cluster's event log order: `pos` is an event's position, `seq` its id in the event tables. */
export interface EventLogTable {
  pos: number;
  seq: number;
  node: string;
}

/** Policy rules set at run time (`name` 'current'; the config file's rules until one is stored). */
export interface PoliciesTable {
  name: string;
  /** JSON text of the rules, in order. */
  rules: string;
  updated_at: string;
  updated_by: string;
}

/** One approval (see `Approval` of `@mci/protocol`); `input` is JSON text. */
export interface ApprovalsTable {
  id: string;
  pid: number;
  run: number;
  principal: string;
  kind: string;
  tool: string | null;
  input: string | null;
  method: string | null;
  url: string | null;
  position: number;
  state: string;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  /** 1 once a node took on resuming the process after the decision (or there is nothing to resume). */
  resumed: Generated<number>;
}

/** How much of its outputs and logs a suspended run delivered (JSON), which its resumed run skips. */
export interface RunDeliveredTable {
  pid: number;
  run: number;
  delivered: string;
}

/**
 * The calls of runs (tool calls and fetches), one row per call: `body`, the JSON text of its audit
 * record (`CallRecord` without `pid` and `run`); `input_hash`, the sha256 of its whole input;
 * `replay`, the JSON text of its whole result when `body` holds it cut and the run suspended.
 */
export interface CallsTable {
  pid: number;
  run: number;
  position: number;
  body: string;
  input_hash: string;
  replay: string | null;
}

/** One row per session: a principal's group of processes with one durable state. Times: epoch ms. */
export interface SessionsTable {
  id: string;
  owner: string;
  created_at: number;
  updated_at: number;
}

/**
 * The durable key-value state of sessions. `scope`: a session id, or `pid:N` for a process without a
 * session. `value`: the output encoding of `@mci/protocol` as JSON text, `bytes` its UTF-8 length;
 * `version` counts the writes of the key from 1; `expires_at`: epoch ms, null for never.
 */
export interface StateTable {
  scope: string;
  key: string;
  value: string;
  bytes: number;
  version: number;
  expires_at: number | null;
  updated_at: number;
}

/**
 * One row per skill of a principal: `latest` is its newest version, `created_at` (epoch ms) when its
 * first version was saved (the order skills are listed in, newest first).
 */
export interface SkillsTable {
  owner: string;
  name: string;
  latest: number;
  created_at: number;
}

/**
 * Every saved version of a skill. `input_schema`: JSON text; `code`: the TypeScript as saved; `js`:
 * the body that runs it (see `skills/skill-module.ts`); `created_at`: epoch ms; `created_by`: the pid
 * of the program that saved it, null when saved otherwise.
 */
export interface SkillVersionsTable {
  owner: string;
  name: string;
  version: number;
  description: string;
  input_schema: string;
  code: string;
  js: string;
  created_at: number;
  created_by: number | null;
}

/** The process database. */
export interface Database {
  processes: ProcessesTable;
  runs: RunsTable;
  outputs: OutputsTable;
  logs: LogsTable;
  events: EventsTable;
  counters: CountersTable;
  conversations: ConversationsTable;
  chat_messages: ChatMessagesTable;
  nodes: NodesTable;
  event_log: EventLogTable;
  policies: PoliciesTable;
  approvals: ApprovalsTable;
  run_delivered: RunDeliveredTable;
  calls: CallsTable;
  run_files: RunFilesTable;
  sessions: SessionsTable;
  state: StateTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
}

/** A connection to the process database, or a transaction on one. */
export type Db = Kysely<Database> | Transaction<Database>;
