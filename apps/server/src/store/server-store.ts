import type { Logger } from 'pino';
import { ConfigError } from '../config/config-error.ts';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { type Retention, type RetentionOptions, startRetention } from './retention.ts';
import { isPostgresUrl, openPostgresStore } from './sql/open-postgres.ts';
import { openSqliteStore } from './sql/open-sqlite.ts';
import type { SqlProcessStore } from './sql/sql-store.ts';

/** Who deletes expired processes (an operator, so every process is visible to it). */
export const RETENTION_PRINCIPAL: Principal = { id: 'mci:retention', role: 'operator' };

/**
 * Opens the server's durable store at `db` (a file path or `:memory:` for SQLite, a `postgres://` URL
 * for PostgreSQL, where the server holds the lease of node `settings.node`, shared with other nodes
 * with `settings.cluster`), logging failed write batches and
 * the leases it ends; `undefined` when no `db` is given (the manager then keeps processes in memory).
 * @throws StoreError when the database cannot be opened.
 */
export async function openServerStore(
  db: string | undefined,
  logger: Logger,
  settings: {
    node?: string;
    cluster?: boolean;
    nodeLeaseMs?: number;
    onLeaseLost?: (node: string) => void;
  } = {},
): Promise<SqlProcessStore | undefined> {
  const { node, cluster, nodeLeaseMs, onLeaseLost } = settings;
  if (cluster && (db === undefined || !isPostgresUrl(db)))
    throw new ConfigError(
      'CONFIG_INVALID',
      `--cluster needs a PostgreSQL database (--db postgres://...); ${db === undefined ? 'no --db was given' : `${db} is an SQLite file`}, which serves one node`,
      { path: 'cluster' },
    );
  if (db === undefined) return undefined;
  const onError = (error: unknown) => logger.error({ err: error }, `process store: ${String(error)}`);
  const onRecovered = () => logger.info('process store: write batches commit again');
  const store = isPostgresUrl(db)
    ? await openPostgresStore({
        url: db,
        onError,
        onRecovered,
        ...(cluster !== undefined && { cluster }),
        node: {
          ...(node !== undefined && { name: node }),
          ...(nodeLeaseMs !== undefined && { leaseMs: nodeLeaseMs, renewMs: Math.max(20, nodeLeaseMs / 5) }),
          onExpired: (names, adopted) =>
            names.length > 0
              ? logger.warn(
                  { nodes: names, adopted },
                  `node lease expired: ${names.join(', ')} stopped without releasing it` +
                    (adopted > 0 ? `; this node took over ${adopted} processes` : ''),
                )
              : logger.info({ adopted }, `this node took over ${adopted} processes left by stopped nodes`),
          onLost: (name) => {
            logger.error(
              { node: name },
              `node ${name}: another node ended this node's lease (not renewed in time); its writes are dropped from now on`,
            );
            onLeaseLost?.(name);
          },
        },
      })
    : await openSqliteStore({ path: db, onError, onRecovered });
  logger.info(
    {
      db: store.path,
      schema: store.schema,
      ...(store.nodes && { node: store.nodes.node, cluster: store.cluster !== undefined }),
    },
    'process store open',
  );
  return store;
}

/** Starts retention on the server's store (none without a store, or with `options: false`). */
export function startServerRetention(
  store: SqlProcessStore | undefined,
  manager: Pick<ProcessManager, 'delete'>,
  options: RetentionOptions | false | undefined,
  logger: Logger,
): Retention | undefined {
  if (!store || options === false) return undefined;
  return startRetention(
    store,
    async (pid) => {
      await manager.delete(pid, RETENTION_PRINCIPAL);
      logger.debug({ pid }, `process ${pid} deleted by retention`);
    },
    {
      ...options,
      onError: (error) =>
        logger.error({ err: error }, 'process retention failed; retrying at the next interval'),
    },
  );
}
