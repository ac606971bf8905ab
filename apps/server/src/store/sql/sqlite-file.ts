import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Kysely } from 'kysely';
import { type Env, readEnv } from '../../config/read-setting.ts';
import { corruptError, openError, StoreError } from '../store-error.ts';
import { sqliteKysely } from './connect.ts';
import { SQLITE } from './engine.ts';
import { MIGRATIONS, type Migration, migrate } from './migrations.ts';
import type { Database } from './tables.ts';

/**
 * The process database when none is given (`mci serve` without `--db` or `MCI_DB`, `openSqliteStore`
 * without `path`): one file per user, `$XDG_DATA_HOME/mci/mci.db` (else `~/.local/share/mci/mci.db`),
 * the same whichever directory the server starts in.
 * @see https://specifications.freedesktop.org/basedir-spec/latest/
 */
export function defaultDbPath(env: Env = process.env): string {
  const dataHome =
    readEnv(env, 'XDG_DATA_HOME') ?? join(readEnv(env, 'HOME') ?? homedir(), '.local', 'share');
  return join(dataHome, 'mci', 'mci.db');
}

/** Whether `path` names a throwaway in-memory database rather than a file. */
export const isMemoryPath = (path: string) => path === ':memory:';

/** An open, migrated database. */
export interface OpenDatabase {
  db: DatabaseSync;
  /** Kysely over `db` (the same connection). */
  kysely: Kysely<Database>;
  /** Absolute file path, or `:memory:`. */
  path: string;
  /** Schema version found on disk (0 for a new database) and the version now. */
  schema: { from: number; to: number };
  /** Closes the database and releases its lock. */
  close(): void;
}

/**
 * Opens (creating it and its directory if needed) the database at `path`, takes its lock, switches to
 * WAL, and applies pending migrations.
 *
 * WAL with `synchronous = NORMAL`: a committed batch survives a crash of the server (`kill -9`); a power
 * loss may lose the last batches, never corrupt the file. Automatic checkpoints are off: the store runs
 * them on a worker thread ({@link startCheckpointer}). One server per database: an exclusive SQLite lock
 * on `PATH.lock`, held while open (the OS drops it if the server dies), makes a second one fail with
 * `STORE_LOCKED` instead of interleaving pids; readers such as the `sqlite3` shell still work. A damaged
 * file (SQLite's `quick_check` fails) is `STORE_CORRUPT`, naming the file and how to recover it; every
 * failure releases the lock.
 * @see https://sqlite.org/wal.html
 * @throws StoreError `STORE_UNAVAILABLE`, `STORE_CORRUPT`, `STORE_FOREIGN`, `STORE_TOO_NEW`, `STORE_LOCKED`.
 */
export async function openDatabase(
  path: string,
  options: { busyTimeoutMs?: number; migrations?: readonly Migration[] } = {},
): Promise<OpenDatabase> {
  const memory = isMemoryPath(path);
  const file = memory ? path : resolve(path);
  if (!memory) {
    try {
      mkdirSync(dirname(file), { recursive: true });
    } catch (error) {
      throw new StoreError(
        'STORE_UNAVAILABLE',
        file,
        `cannot create the directory ${dirname(file)} of the process database ${file} (${(error as Error).message}); pass another --db`,
        { cause: error },
      );
    }
  }
  const timeout = options.busyTimeoutMs ?? 2000;
  let lock: DatabaseSync | undefined;
  let db: DatabaseSync | undefined;
  const close = () => {
    for (const handle of [db, lock]) {
      try {
        handle?.close();
      } catch {
        // Closing a half-open database can fail too; nothing more to release.
      }
    }
  };
  try {
    if (!memory) {
      lock = new DatabaseSync(`${file}.lock`, { timeout });
      lock.exec('PRAGMA locking_mode = EXCLUSIVE');
      // The first write takes the exclusive lock; in this mode it is kept until the connection closes.
      lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder');
      lock.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
    }
    db = new DatabaseSync(file, { timeout });
    if (!memory) {
      const mode = db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode?: string } | undefined;
      if (mode?.journal_mode !== 'wal') {
        throw new StoreError(
          'STORE_UNAVAILABLE',
          file,
          `cannot switch the process database ${file} to WAL mode`,
        );
      }
      db.exec('PRAGMA synchronous = NORMAL');
      db.exec('PRAGMA wal_autocheckpoint = 0');
      // Room for a large batch without spilling to the WAL before its commit.
      db.exec('PRAGMA cache_size = -16384');
    }
    // Proves the file is writable now, not at the first batch.
    db.exec('BEGIN IMMEDIATE; COMMIT');
    // A damaged file is refused here, with advice, rather than failing requests later. quick_check
    // reads every page once (about a second per GB) and skips the slower index/row cross-checks.
    const check = db.prepare('PRAGMA quick_check(1)').get() as { quick_check?: string } | undefined;
    if (check?.quick_check !== 'ok')
      throw corruptError(file, new Error(check?.quick_check ?? 'quick_check failed'));
    const kysely = sqliteKysely(db);
    const schema = await migrate(kysely, SQLITE, file, options.migrations ?? MIGRATIONS);
    return { db, kysely, path: file, schema, close };
  } catch (error) {
    close();
    throw openError(file, error);
  }
}
