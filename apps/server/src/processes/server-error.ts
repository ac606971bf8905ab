import { type ErrorBody, errorBody } from '@mci/protocol';
import { StoreError } from '../store/store-error.ts';

/**
 * Codes of {@link ServerError}, each with its HTTP status: `VALIDATION` 400, `UNAUTHORIZED` 401,
 * `FORBIDDEN` 403, `NOT_FOUND` 404, `CONFLICT` / `NOT_PENDING` (an approval decided already) / `VERSION_CONFLICT` (a stale `state` compare-and-set) 409, `CODE_TOO_LARGE` / `PAYLOAD_TOO_LARGE` 413,
 * `UNSUPPORTED_MEDIA_TYPE` 415, `MISDIRECTED_REQUEST` 421, `QUEUE_FULL` / `LIMIT_EXCEEDED` (a
 * per-client limit) / `RATE_LIMITED` / `QUOTA_EXCEEDED` (a principal's quota) 429, `INTERNAL` 500,
 * `SHUTTING_DOWN` / `STORE_UNAVAILABLE` (the database did not answer in time) 503.
 */
export const SERVER_ERROR_STATUS = {
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  NOT_PENDING: 409,
  VERSION_CONFLICT: 409,
  CODE_TOO_LARGE: 413,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  MISDIRECTED_REQUEST: 421,
  QUEUE_FULL: 429,
  LIMIT_EXCEEDED: 429,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  INTERNAL: 500,
  SHUTTING_DOWN: 503,
  STORE_UNAVAILABLE: 503,
} as const;

/** A {@link ServerError} code (`'NOT_FOUND'`, `'QUEUE_FULL'`, ...). */
export type ServerErrorCode = keyof typeof SERVER_ERROR_STATUS;

/**
 * The one error class of the server boundary: thrown by the process manager and turned into the one
 * error body `{ error, code, message, path? }` (`errorBody` of @mci/protocol) by the transports: the
 * JSON of an HTTP answer with {@link ServerError.status}, or a WebSocket `error` message. `path` names the bad field of a
 * request (`timeoutMs`, `ref`); `retryAfter` the seconds a client should wait before it tries again (HTTP
 * `Retry-After`).
 */
export class ServerError extends Error {
  override readonly name = 'ServerError';
  readonly code: ServerErrorCode;
  /** The HTTP status for {@link ServerError.code}. */
  readonly status: number;
  /** The request field at fault, for validation errors. */
  readonly path: string | undefined;
  /** Seconds to wait before a retry, for errors that know it (`QUOTA_EXCEEDED`). */
  readonly retryAfter: number | undefined;

  constructor(
    code: ServerErrorCode,
    message: string,
    options?: { path?: string; cause?: unknown; retryAfter?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = SERVER_ERROR_STATUS[code];
    this.path = options?.path;
    this.retryAfter = options?.retryAfter;
  }

  /** The wire form: the one error body `{ error, code, message, path?, retryAfter? }`. */
  toJSON(): ErrorBody {
    return errorBody(this.code, this.message, this.path, this.retryAfter);
  }
}

/**
 * Turns anything thrown into a {@link ServerError}: a store that did not answer in time becomes
 * `STORE_UNAVAILABLE` (503, the client may retry), other unknown throws `INTERNAL` (kept as `cause`).
 */
export function toServerError(error: unknown): ServerError {
  if (error instanceof ServerError) return error;
  if (error instanceof StoreError && error.code === 'STORE_UNAVAILABLE')
    return new ServerError('STORE_UNAVAILABLE', error.message, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new ServerError('INTERNAL', message, { cause: error });
}
