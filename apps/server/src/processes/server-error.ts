/**
 * Codes of {@link ServerError}, each with its HTTP status: `VALIDATION` 400, `UNAUTHORIZED` 401,
 * `FORBIDDEN` 403, `NOT_FOUND` 404, `CONFLICT` 409, `CODE_TOO_LARGE` / `PAYLOAD_TOO_LARGE` 413,
 * `QUEUE_FULL` / `LIMIT_EXCEEDED` (a per-client quota) / `RATE_LIMITED` 429, `INTERNAL` 500,
 * `SHUTTING_DOWN` 503.
 */
export const SERVER_ERROR_STATUS = {
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  CODE_TOO_LARGE: 413,
  PAYLOAD_TOO_LARGE: 413,
  QUEUE_FULL: 429,
  LIMIT_EXCEEDED: 429,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SHUTTING_DOWN: 503,
} as const;

/** A {@link ServerError} code (`'NOT_FOUND'`, `'QUEUE_FULL'`, ...). */
export type ServerErrorCode = keyof typeof SERVER_ERROR_STATUS;

/**
 * The one error class of the server boundary: thrown by the process manager and turned into an HTTP
 * error (`{ error, code }` with {@link ServerError.status}) or a WebSocket error reply
 * (`{ type: 'error', id, code, message, path? }`) by the transports. `path` names the bad field of a
 * request (`timeoutMs`, `ref`).
 */
export class ServerError extends Error {
  override readonly name = 'ServerError';
  readonly code: ServerErrorCode;
  /** The HTTP status for {@link ServerError.code}. */
  readonly status: number;
  /** The request field at fault, for validation errors. */
  readonly path: string | undefined;

  constructor(code: ServerErrorCode, message: string, options?: { path?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = SERVER_ERROR_STATUS[code];
    this.path = options?.path;
  }

  /** The wire form `{ code, message, path? }`. */
  toJSON(): { code: ServerErrorCode; message: string; path?: string } {
    return this.path === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, path: this.path };
  }
}

/** Turns anything thrown into a {@link ServerError} (unknown throws become `INTERNAL`, kept as `cause`). */
export function toServerError(error: unknown): ServerError {
  if (error instanceof ServerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ServerError('INTERNAL', message, { cause: error });
}
