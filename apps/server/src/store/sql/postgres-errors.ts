import { setImmediate } from 'node:timers/promises';

/**
 * SQLSTATE classes after which the same transaction may succeed on a new connection: connection
 * exceptions, the server shutting down or starting, insufficient resources, serialization failures.
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const RETRYABLE_SQLSTATE = /^(08|57P|53|40001|40P01)/;
/** Node's own errors of a connection: `ECONNRESET`, `ECONNREFUSED`, `EPIPE`, `ETIMEDOUT`, ... */
const NODE_ERRNO = /^E[A-Z0-9]+$/;

/**
 * Whether `error` is a failure of the connection rather than of the statements: an SQLSTATE of a
 * retryable class, a Node errno code, or a `pg` error without a code (a connection that ended or
 * timed out). An SQL error (a constraint, a lost node lease) is not.
 */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return error instanceof Error;
  return RETRYABLE_SQLSTATE.test(code) || NODE_ERRNO.test(code);
}

/** How many times {@link onLiveConnection} sends a query: once, and again on two other connections. */
const CONNECTION_ATTEMPTS = 3;

/**
 * Runs `query` (one statement on a connection of a `pg` pool), and again when it fails on the
 * connection rather than on the statement ({@link isRetryable}), three attempts at most. A connection
 * the database ended (a restart, `pg_terminate_backend`) can still sit idle in the pool and fail the
 * first query given to it; the pool drops it, so the next attempt runs on another connection.
 * Meant for reads and for writes that may run again: a write whose answer was lost may have committed.
 * @throws the query's error when it cannot pass, or the third attempt's.
 */
export async function onLiveConnection<T>(query: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await query();
    } catch (error) {
      if (attempt >= CONNECTION_ATTEMPTS || !isRetryable(error)) throw error;
      // The pool reads its idle connections first: others the database ended are dropped, not tried next.
      await setImmediate();
    }
  }
}

/** The database URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
