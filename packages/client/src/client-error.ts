import type { CheckDiagnostic } from '@mci/protocol';

/**
 * Codes of {@link ClientError}. Codes the client raises itself: `CONNECT_FAILED` (the first connection
 * could not be opened), `UNAUTHORIZED` (the server refused the token, HTTP 401), `DISCONNECTED` (the
 * connection dropped while a request that must not be repeated was in flight: it may or may not have
 * been applied), `BACKLOG_FULL` (too many requests waiting for a connection), `TIMEOUT` (no reply in
 * time), `CLOSED` (the client was closed), `PROTOCOL` (the server sent something the protocol does not
 * allow). Any other code is the server's wire error code (`NOT_FOUND`, `CONFLICT`, `VALIDATION`, ...).
 */
export type ClientErrorCode =
  | 'CONNECT_FAILED'
  | 'UNAUTHORIZED'
  | 'DISCONNECTED'
  | 'BACKLOG_FULL'
  | 'TIMEOUT'
  | 'CLOSED'
  | 'PROTOCOL'
  | (string & {});

/**
 * The one error class of `@mci/client`: a request or the connection failed. `code` says why; `path`
 * names the bad field when the server rejected a request (`timeoutMs`, `pid`); `retryAfter` is the
 * seconds to wait before trying again when the server said so (`QUOTA_EXCEEDED`).
 */
export class ClientError extends Error {
  override readonly name = 'ClientError';
  readonly code: ClientErrorCode;
  readonly path: string | undefined;
  /** Seconds to wait before a retry, when the server's error gave them. */
  readonly retryAfter: number | undefined;
  /** The check's findings, when the server refused code that does not compile (`CHECK_FAILED`). */
  readonly diagnostics: CheckDiagnostic[] | undefined;

  constructor(
    code: ClientErrorCode,
    message: string,
    options: { path?: string; retryAfter?: number; diagnostics?: CheckDiagnostic[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
    this.retryAfter = options.retryAfter;
    this.diagnostics = options.diagnostics;
  }
}

/** Turns anything thrown into a {@link ClientError} (unchanged when it already is one). */
export function toClientError(error: unknown, code: ClientErrorCode = 'PROTOCOL'): ClientError {
  if (error instanceof ClientError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ClientError(code, message, { cause: error });
}
