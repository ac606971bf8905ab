import type { CompiledQuery, Kysely } from 'kysely';
import type { ClusterStore } from '../../processes/process-store.ts';
import type { Engine } from './engine.ts';
import type { NodesView } from './sql-store.ts';
import type { Database } from './tables.ts';
import type { WriteSetNode } from './write-set.ts';

// What an engine's opener (open-sqlite.ts, open-postgres.ts) hands the one SQL store, and the
// store's settings, the same for both engines.

/** The parts of a `SqlStore` that differ by engine and mode, given by the engine's opener. */
export interface SqlStoreParts {
  db: Kysely<Database>;
  engine: Engine;
  /** For messages: a path, or a URL without its password. */
  label: string;
  schema: { from: number; to: number };
  /** Where a server alone on its database continues its pids and seqs. */
  counters: { lastPid: number; lastSeq: number };
  /** A cluster node: its pids and event ids, and what each of its batches adds (lease check, log positions). */
  cluster?: ClusterStore & { writes: WriteSetNode; nodeOf(pid: number): Promise<string | undefined> };
  /**
   * Runs a batch's statements in one transaction, in order: on SQLite one after another, on
   * PostgreSQL sent together on one connection (pipelined), so a batch costs one round trip.
   * @throws the database's error; the transaction is rolled back.
   */
  send(statements: CompiledQuery[]): Promise<void>;
  /** Whether an error of a commit may pass if the batch is tried again (a lost connection, a full disk). */
  retryable(error: unknown): boolean;
  /** Why the store cannot be trusted apart from failed commits (a deleted file), if it cannot. */
  problem?: () => string | undefined;
  /**
   * A batch failed with an error that cannot pass and was dropped: true when the engine handled it
   * (a cluster node's lost lease), so it is not reported as an error.
   */
  dropped?(error: unknown): boolean;
  /** Releases the engine's resources after the last commit (connections, locks, checkpoints). */
  close(): Promise<void>;
  options: SqlStoreOptions;
  nodes?: NodesView;
}

/** Settings of the SQL store, the same for both engines. */
export interface SqlStoreOptions {
  /** How long (ms) writes wait to be committed together, unless someone waits for them. @default 5 */
  flushDelayMs?: number;
  /**
   * How long (ms) a caller of `committed()` or a read waits for the database before
   * `STORE_UNAVAILABLE` (HTTP 503), and how long a batch may wait before the store reports itself
   * unavailable. Batches that fail on an error that may pass are retried until they commit. @default 5000
   */
  timeoutMs?: number;
  /** Writes waiting to commit past which a new process is refused with `STORE_UNAVAILABLE`. @default 100000 */
  maxPendingWrites?: number;
  /** Limits of the cache of recently used records and runs. @default { processes: 2000, bytes: 33554432 } */
  cache?: { processes?: number; bytes?: number };
  /**
   * A batch failed (the first failure after a commit; it is retried), or failed with an error that
   * cannot pass and was dropped, or the engine reports a problem. @default a process warning
   */
  onError?: (error: unknown) => void;
  /** Batches commit again after failures. */
  onRecovered?: () => void;
}
