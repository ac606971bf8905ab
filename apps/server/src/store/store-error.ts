/**
 * Codes of {@link StoreError}: `STORE_UNAVAILABLE` (the path cannot be created, opened or written),
 * `STORE_CORRUPT` (not an SQLite file, or a damaged one), `STORE_FOREIGN` (an SQLite database of
 * something else), `STORE_TOO_NEW` (written by a newer server), `STORE_LOCKED` (another server uses it),
 * `STORE_CLOSED` (used after `close()`).
 */
export type StoreErrorCode =
  | 'STORE_UNAVAILABLE'
  | 'STORE_CORRUPT'
  | 'STORE_FOREIGN'
  | 'STORE_TOO_NEW'
  | 'STORE_LOCKED'
  | 'STORE_CLOSED';

/**
 * The error of the durable process store: the message names the database path and what to do; the
 * SQLite or file-system error is the `cause`. `mci serve` prints it and exits 1.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;
  /** The database path (`:memory:` for an in-memory one). */
  readonly path: string;

  constructor(code: StoreErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = path;
  }
}

/** SQLite primary result codes this module tells apart (`errcode & 0xff`). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/** Whether `error` is SQLite saying the file is damaged or not a database. */
export function isCorruption(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && [SQLITE_CORRUPT, SQLITE_NOTADB].includes(errcode & 0xff);
}

/**
 * `STORE_CORRUPT` for a damaged database file: names the file, what SQLite found, and what to do
 * (recover its rows with the `sqlite3` shell's `.recover`, or start on a new `--db`).
 * @see https://sqlite.org/recovery.html
 */
export function corruptError(path: string, error: unknown): StoreError {
  const detail = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  return new StoreError(
    'STORE_CORRUPT',
    path,
    `the process database ${path} is corrupt or not an SQLite database (${detail}). ` +
      `Recover what it holds with: sqlite3 ${path} ".recover" | sqlite3 ${path}.recovered ` +
      `(then start with --db ${path}.recovered), or move it away and start with a new --db`,
    { cause: error },
  );
}

/**
 * Turns an error thrown while opening the database into a {@link StoreError} with a message a user can
 * act on.
 * @see https://sqlite.org/rescode.html
 */
export function openError(path: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const errcode = (error as { errcode?: unknown }).errcode;
  const detail = error instanceof Error ? error.message : String(error);
  const where = `the process database ${path}`;
  switch (typeof errcode === 'number' ? errcode & 0xff : undefined) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return corruptError(path, error);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return new StoreError(
        'STORE_LOCKED',
        path,
        `${where} is in use by another process (another mci serve?); stop it or pass another --db`,
        { cause: error },
      );
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
      return new StoreError(
        'STORE_UNAVAILABLE',
        path,
        `cannot open ${where} for writing (${detail}); check the path and its permissions, or pass another --db`,
        { cause: error },
      );
    default:
      return new StoreError('STORE_UNAVAILABLE', path, `cannot open ${where}: ${detail}`, { cause: error });
  }
}
