import { hostname } from 'node:os';
import { COUNTER_QUERIES } from '../id-counters.ts';
import { StoreError } from '../store-error.ts';
import { PgBridge } from './pg-bridge.ts';
import { MAX_NODE_NAME_BYTES } from './pg-cluster.ts';
import { migratePostgres } from './pg-migrations.ts';
import { type PostgresProcessStore, PostgresStore } from './postgres-store.ts';

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (see `pg`'s connection strings). */
  url: string;
  /** How long (ms) writes wait to be sent together; 0 sends once per event-loop turn. @default 5 */
  flushDelayMs?: number;
  /**
   * How long (ms) a read or a caller of `committed()` waits for the database before
   * `STORE_UNAVAILABLE` (HTTP 503), and how long batches may wait to commit before the store reports
   * itself unavailable (`health()`). Batches that fail on a dropped connection are retried until they
   * commit, however long that takes. @default 5000
   */
  timeoutMs?: number;
  /**
   * Batches sent and not yet committed past which a new process is refused at once with
   * `STORE_UNAVAILABLE` (HTTP 503). Writes of processes already accepted are never refused. @default 64
   */
  maxPendingBatches?: number;
  /** Connections of the pool. @default 4 */
  poolSize?: number;
  /** A batch of writes failed with an SQL error and was rolled back. @default a process warning */
  onError?: (error: unknown) => void;
  /**
   * Write batches fail on connection errors and are retried until they commit (`error`: the failure),
   * or they commit again (`undefined`).
   */
  onRetrying?: (error: string | undefined) => void;
  /** Limits of the cache of recently used records and runs. @default { processes: 2000, bytes: 33554432 } */
  cache?: { processes?: number; bytes?: number };
  /** This server's lease in the `nodes` table (see {@link NodeLeaseOptions}). */
  node?: NodeLeaseOptions;
  /**
   * Share the database with other servers (nodes): no database lock; pids and event ids from shared
   * counters, events delivered in commit order to every node, processes owned by the node that runs
   * them (see the store's `cluster` and docs/cluster.md). @default false
   */
  cluster?: boolean;
}

/** How a server holds its row in the `nodes` table of a Postgres database. */
export interface NodeLeaseOptions {
  /** The node's name, unique among live nodes. @default `${hostname}-${pid}` */
  name?: string;
  /** How long (ms) a lease lasts without renewal. @default 10000 */
  leaseMs?: number;
  /** How often (ms) the lease is renewed. @default 2000 */
  renewMs?: number;
  /**
   * This node ended the leases of `names` (maybe none), which expired without being released, and
   * took over `adopted` processes of those and of stopped nodes (a cluster's node runs them or ends
   * them interrupted).
   */
  onExpired?: (names: string[], adopted: number) => void;
  /** Another node ended this node's lease (not renewed within `leaseMs`). */
  onLost?: (name: string) => void;
}

/** The advisory lock key a server holds on its database ("MCIS"). */
const DATABASE_LOCK = 0x4d434953;

/** Whether `db` names a Postgres database (`postgres://` or `postgresql://`) rather than a file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Opens the process store on PostgreSQL: the same tables, records and behaviour as the SQLite store
 * (`openSqliteStore`), with `pg` on a worker thread (see {@link PgBridge}); nothing waits for the
 * database on the server's thread. Writes are batched per `flushDelayMs` into one transaction, sent
 * without waiting; updates of one row within a batch merged; recently used records and runs cached.
 * Past `maxPendingBatches` uncommitted batches a new process is refused with `STORE_UNAVAILABLE`, so
 * no new work piles up in memory. A batch that fails on its connection (a database restart) is retried
 * on a new one until it commits; one that fails with an SQL error goes to `onError`.
 * One server uses a database at a time (a session-level advisory lock, as the SQLite store locks its
 * file), unless `cluster` is set: then any number of nodes share it.
 * @throws StoreError `STORE_UNAVAILABLE` when the database cannot be reached within `timeoutMs`,
 * `STORE_LOCKED` when another server uses it, `STORE_TOO_NEW` when its schema is newer than this server's.
 * @throws RangeError for a cluster node name longer than 50 bytes.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresProcessStore> {
  const onError =
    options.onError ?? ((error: unknown) => process.emitWarning(`process store: ${String(error)}`));
  const node = options.node?.name ?? `${hostname()}-${process.pid}`;
  if (options.cluster && Buffer.byteLength(node) > MAX_NODE_NAME_BYTES)
    throw new RangeError(`node name ${JSON.stringify(node)} is longer than ${MAX_NODE_NAME_BYTES} bytes`);
  let store: PostgresStore | undefined;
  let leaseLost = false;
  const bridge = new PgBridge(options.url, {
    ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    onLost: (error, writes) => onError(new Error(`a batch of ${writes} writes was lost: ${error.message}`)),
    onRetrying: (error) => options.onRetrying?.(error),
    onLockLost: (message) => onError(new Error(`the database lock was lost: ${message}`)),
    ...(options.node?.onExpired && { onNodesExpired: options.node.onExpired }),
    onCluster: (message) => store?.cluster?.receive(message),
    onLeaseLost: (name) => {
      if (leaseLost) return;
      leaseLost = true;
      store?.fence();
      options.node?.onLost?.(name);
    },
  });
  try {
    // Alone on its database, a server holds the lock exclusively and hands out pids and seqs itself;
    // cluster nodes share it, so neither kind starts beside the other.
    const held = await bridge.lock(DATABASE_LOCK, options.cluster === true);
    if (held !== 'ok') throw lockedError(bridge.url, options.cluster === true, held);
    const schema = await migratePostgres(bridge);
    const leaseMs = options.node?.leaseMs ?? 10_000;
    if (!(await bridge.lease(node, leaseMs, options.node?.renewMs ?? 2000, options.cluster === true)))
      throw new StoreError(
        'STORE_LOCKED',
        bridge.url,
        `a live node named ${node} holds a lease on ${bridge.url}; give each node its own name (--node), or wait for the lease to expire`,
      );
    const last = options.cluster
      ? { lastPid: 0, lastSeq: 0 }
      : await readCounters((sql) => bridge.query(sql).then((rows) => Object.values(rows[0] ?? {})[0]));
    store = new PostgresStore(bridge, schema, node, { ...options, onError }, last);
    await store.cluster?.start();
    return store;
  } catch (error) {
    void bridge.close().catch(() => {});
    throw error;
  }
}

/** The largest answers of {@link COUNTER_QUERIES}: where a server alone on its database continues. */
async function readCounters(value: (sql: string) => Promise<unknown>) {
  const largest = async (queries: readonly string[]) =>
    Math.max(0, ...(await Promise.all(queries.map(async (sql) => Number((await value(sql)) ?? 0)))));
  return { lastPid: await largest(COUNTER_QUERIES.pid), lastSeq: await largest(COUNTER_QUERIES.seq) };
}

/** Why the database lock was refused: the kind of server holding it, and what to do. */
function lockedError(url: string, cluster: boolean, held: 'exclusive' | 'shared'): StoreError {
  const message =
    held === 'shared'
      ? `the process database ${url} is in use by mci serve --cluster nodes; start this server with --cluster too, or pass another --db (see docs/cluster.md)`
      : cluster
        ? `the process database ${url} is in use by an mci serve without --cluster; stop it, or start every server on this database with --cluster (see docs/cluster.md)`
        : `the process database ${url} is in use by another mci serve; one server per database unless every one runs with --cluster (see docs/cluster.md)`;
  return new StoreError('STORE_LOCKED', url, message);
}
