import { hostname } from 'node:os';
import { type CompiledQuery, sql } from 'kysely';
import type pg from 'pg';
import { ClusterNode, MAX_NODE_NAME_BYTES } from '../../cluster/cluster-node.ts';
import { LEASE_LOST, NodeLease } from '../../cluster/node-lease.ts';
import { COUNTER_QUERIES } from '../id-counters.ts';
import { StoreError } from '../store-error.ts';
import { postgresKysely, postgresPool } from './connect.ts';
import { POSTGRES } from './engine.ts';
import { migrate } from './migrations.ts';
import { isRetryable, redactUrl } from './postgres-errors.ts';
import { DatabaseLock } from './postgres-lock.ts';
import { readClusterProcesses, readNodes } from './reads.ts';
import { type SqlProcessStore, SqlStore } from './sql-store.ts';
import type { SqlStoreOptions } from './store-parts.ts';

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions extends SqlStoreOptions {
  /** `postgres://user:password@host:port/database` (see `pg`'s connection strings). */
  url: string;
  /** Connections of the pool. @default 4 */
  poolSize?: number;
  /** This server's lease in the `nodes` table (see {@link NodeLeaseOptions}). */
  node?: NodeLeaseOptions;
  /**
   * Share the database with other servers (nodes): pids and event ids from shared counters, events
   * delivered in commit order to every node, processes owned by the node that runs them (see
   * docs/cluster.md). Every server on one database must run with it, or none. @default false
   */
  cluster?: boolean;
}

/** How a cluster node holds its row in the `nodes` table. */
export interface NodeLeaseOptions {
  /** The node's name, unique among live nodes. @default `${hostname}-${pid}` */
  name?: string;
  /** How long (ms) a lease lasts without renewal. @default 10000 */
  leaseMs?: number;
  /** How often (ms) the lease is renewed. @default 2000 */
  renewMs?: number;
  /**
   * This node ended the leases of `names` (maybe none), which expired without being released, and
   * took over `adopted` processes of those and of stopped nodes.
   */
  onExpired?: (names: string[], adopted: number) => void;
  /** Another node ended this node's lease (not renewed within `leaseMs`). */
  onLost?: (name: string) => void;
}

/** Whether `db` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than a file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Opens the process store on PostgreSQL: the same {@link SqlStore} as on SQLite, over a `pg` pool
 * (nothing waits for the database on the server's thread). A batch that fails on its connection (a
 * database restart) is retried on a new one until it commits. One server uses a database at a time
 * (an exclusive advisory lock), unless every server on it is a `cluster` node (they share the lock).
 * @throws StoreError `STORE_UNAVAILABLE` when the database cannot be reached, `STORE_LOCKED` when a
 * server of the other kind (or, alone, another server) uses it or a live node has this node's name,
 * `STORE_TOO_NEW` when its schema is newer than this server's.
 * @throws RangeError for a cluster node name longer than 50 bytes.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<SqlProcessStore> {
  const label = redactUrl(options.url);
  const onError =
    options.onError ?? ((error: unknown) => process.emitWarning(`process store: ${String(error)}`));
  const name = options.node?.name ?? `${hostname()}-${process.pid}`;
  const cluster = options.cluster === true;
  if (cluster && Buffer.byteLength(name) > MAX_NODE_NAME_BYTES)
    throw new RangeError(`node name ${JSON.stringify(name)} is longer than ${MAX_NODE_NAME_BYTES} bytes`);
  const connectMs = options.timeoutMs ?? 5000;
  const pool = postgresPool(options.url, {
    ...(options.poolSize !== undefined && { size: options.poolSize }),
    connectMs,
  });
  const db = postgresKysely(pool);
  const unreachable = (error: unknown) =>
    error instanceof StoreError || error instanceof RangeError
      ? error
      : new StoreError(
          'STORE_UNAVAILABLE',
          label,
          `cannot reach the process database ${label}: ${String((error as Error)?.message ?? error)}`,
          {
            cause: error,
          },
        );
  let lock: DatabaseLock | undefined;
  let node: ClusterNode | undefined;
  let lease: NodeLease | undefined;
  let store: SqlStore | undefined;
  let fenced = false;
  /** Another node ended this node's lease: its writes are dropped from now on (the database refuses them). */
  const fence = () => {
    store?.fence();
    if (!fenced) options.node?.onLost?.(name);
    fenced = true;
  };
  try {
    const held = await DatabaseLock.take(options.url, {
      shared: cluster,
      connectMs,
      onLost: (message) => onError(new Error(`the database lock of ${label} was lost: ${message}`)),
    });
    if (held === 'exclusive' || held === 'shared') throw lockedError(label, cluster, held);
    lock = held;
    const schema = await migrate(db, POSTGRES, label);
    if (cluster) {
      node = new ClusterNode({
        url: options.url,
        pool,
        db,
        engine: POSTGRES,
        name,
        leaseMs: options.node?.leaseMs ?? 10_000,
        renewMs: options.node?.renewMs ?? 2000,
        connectMs,
        ...(options.node?.onExpired && { onExpired: options.node.onExpired }),
        onLost: fence,
      });
    } else {
      // Alone on its database, a server holds a lease too, so `nodes` shows it and its successor.
      lease = new NodeLease(pool, name, options.node?.leaseMs ?? 10_000, {
        expired: (names, adopted) => options.node?.onExpired?.(names, adopted.length),
        lost: fence,
      });
    }
    if (!(await (node ? node.start() : lease!.acquire(options.node?.renewMs ?? 2000))))
      throw new StoreError(
        'STORE_LOCKED',
        label,
        `a live node named ${name} holds a lease on ${label}; give each node its own name (--node), or wait for the lease to expire`,
      );
    const counters = cluster ? { lastPid: 0, lastSeq: 0 } : await readCounters(db);
    const taken = { lock, node, lease };
    store = new SqlStore({
      db,
      engine: POSTGRES,
      label,
      schema,
      counters,
      ...(node && { cluster: node }),
      retryable: isRetryable,
      send: (statements) => sendPipelined(pool, statements),
      // Another node ended this node's lease: the database refuses its batches from now on.
      dropped: (error) => {
        if (!String((error as Error)?.message).includes(LEASE_LOST)) return false;
        fence();
        return true;
      },
      options: { ...options, onError },
      nodes: {
        node: name,
        list: () => readNodes(db),
        ...(cluster && { processes: () => readClusterProcesses(db) }),
      },
      async close() {
        await taken.node?.close();
        await taken.lease?.release();
        await taken.lock?.release();
        await pool.end().catch(() => {});
      },
    });
    const linked = store;
    node?.link({
      write: (add) => linked.writeForCluster(add),
      flush: () => linked.flush(),
      committed: () => linked.committed(),
      forget: (pid) => linked.forget(pid),
    });
    await linked.committed();
    return linked;
  } catch (error) {
    await node?.close().catch(() => {});
    await lease?.release().catch(() => {});
    await lock?.release();
    await pool.end().catch(() => {});
    throw unreachable(error);
  }
}

/** The largest answers of {@link COUNTER_QUERIES}: where a server alone on its database continues. */
async function readCounters(db: ReturnType<typeof postgresKysely>) {
  const value = async (query: string) =>
    Number(Object.values((await sql.raw(query).execute(db)).rows[0] ?? {})[0] ?? 0);
  const largest = async (queries: readonly string[]) =>
    Math.max(0, ...(await Promise.all(queries.map(value))));
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

/**
 * Runs `statements` in one transaction on one connection, sent together without waiting for each
 * answer (the pool's clients are in `pg`'s pipeline mode): one round trip for the batch. A failing statement aborts the
 * transaction, the ones after it fail, and the closing `COMMIT` rolls it back.
 * @throws the first statement's error.
 */
async function sendPipelined(pool: pg.Pool, statements: CompiledQuery[]): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    const answers = await Promise.allSettled([
      client.query('BEGIN'),
      ...statements.map((statement) => client.query(statement.sql, statement.parameters as unknown[])),
      client.query('COMMIT'),
    ]);
    const failed = answers.find((answer) => answer.status === 'rejected');
    if (failed) {
      broken = isRetryable(failed.reason);
      throw failed.reason;
    }
  } finally {
    client.release(broken);
  }
}
