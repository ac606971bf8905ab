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
