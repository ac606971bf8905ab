import { renameSync, rmSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { startCheckpointer } from '../checkpointer.ts';
import { COUNTER_QUERIES } from '../id-counters.ts';
import { SQLITE } from './engine.ts';
import { type SqlProcessStore, SqlStore } from './sql-store.ts';
import { defaultDbPath, isMemoryPath, openDatabase } from './sqlite-file.ts';
import type { SqlStoreOptions } from './store-parts.ts';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions extends SqlStoreOptions {
  /** Database file (created with its directory), or `:memory:` for a throwaway one. @default {@link defaultDbPath} */
  path?: string;
  /** How long (ms) to wait for a database another process holds before `STORE_LOCKED`. @default 2000 */
  busyTimeoutMs?: number;
  /** Time between checkpoints (WAL -> database file, on a worker thread), in ms. @default 1000 */
  checkpointIntervalMs?: number;
  /** How often (ms) the store checks that its file is still in place. @default 1000 */
  fileCheckMs?: number;
}

/** SQLite primary result codes after which a batch may commit when tried again. @see https://sqlite.org/rescode.html */
const PASSING = new Set([
  5, // SQLITE_BUSY
  6, // SQLITE_LOCKED
  8, // SQLITE_READONLY (a file system remounted read-only)
  10, // SQLITE_IOERR
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
]);

const passing = (error: unknown) => {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && PASSING.has(errcode & 0xff);
};

/**
 * Opens the durable process store in SQLite (Node's built-in `node:sqlite`, WAL mode): the
 * {@link SqlStore} over the file, with its lock, checkpoints on a worker thread, and a watch on the
 * file. A batch that fails because the disk is full, the file system read-only or the file
 * unreachable is kept and retried until it commits. A file deleted or replaced while the server runs
 * is written back from the open database at once and again at close (so a restart finds every
 * record), and new processes are refused until the server restarts on it.
 *
 * pids and seqs handed out are reserved ahead of use in small blocks, so after a crash the counters
 * continue past anything a client may have seen (they may skip ahead; they never repeat). After a
 * clean close they continue exactly.
 * @throws StoreError when the database cannot be opened (see `openDatabase`).
 */
export async function openSqliteStore(options: SqliteStoreOptions = {}): Promise<SqlProcessStore> {
  const opened = await openDatabase(options.path ?? defaultDbPath(), {
    ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs }),
  });
  const { db, path } = opened;
  const onError =
    options.onError ?? ((error: unknown) => process.emitWarning(`process store: ${String(error)}`));
  const value = (sql: string) => Number(Object.values(db.prepare(sql).get() ?? {})[0] ?? 0);
  const counters = {
    lastPid: Math.max(...COUNTER_QUERIES.pid.map(value)),
    lastSeq: Math.max(...COUNTER_QUERIES.seq.map(value)),
  };
  const memory = isMemoryPath(path);
  const checkpointer = memory
    ? undefined
    : startCheckpointer(path, options.checkpointIntervalMs ?? 1000, (message) =>
        onError(new Error(`checkpoint of ${path} failed: ${message}`)),
      );
  let moved: string | undefined;
  /** Writes the open database to its path (a new file, renamed over whatever is there). */
  const restore = () => {
    const copy = `${path}.restore-${process.pid}`;
    rmSync(copy, { force: true });
    db.prepare('VACUUM INTO ?').run(copy);
    renameSync(copy, path);
  };
  let watch: NodeJS.Timeout | undefined;
  if (!memory) {
    const original = statSync(path);
    watch = setInterval(async () => {
      if (moved) return;
      const now = await stat(path).catch(() => undefined);
      if (now && now.ino === original.ino && now.dev === original.dev) return;
      moved =
        `the process database file ${path} was ${now ? 'replaced' : 'deleted'} while the server ran; ` +
        'it was written back from the open database; restart the server to continue on it';
      onError(new Error(moved));
      try {
        restore();
      } catch (error) {
        onError(error);
      }
    }, options.fileCheckMs ?? 1000);
    watch.unref();
  }
  const store = new SqlStore({
    db: opened.kysely,
    engine: SQLITE,
    label: path,
    schema: opened.schema,
    counters,
    retryable: passing,
    send: (statements) =>
      opened.kysely.transaction().execute(async (trx) => {
        for (const statement of statements) await trx.executeQuery(statement);
      }),
    problem: () => moved,
    options: { ...options, onError },
    async close() {
      clearInterval(watch);
      // Whatever fails (a damaged file), the checkpointer stops and the lock is released.
      try {
        await checkpointer?.stop();
        if (moved) restore();
        else if (!memory && store.health().ok) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      } catch (error) {
        onError(error);
      } finally {
        opened.close();
      }
    },
  });
  try {
    await store.committed();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
