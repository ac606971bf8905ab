/** What went wrong at the sandbox's boundary (not inside a program: those are `ExecutionResult`s). */
export type SandboxErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_LIMIT'
  | 'INVALID_OPTION'
  | 'POOL_CLOSED'
  | 'WORKER_FAILED';

/**
 * The error `@mci/sandbox` throws for a caller's mistake (a bad request or option, a closed pool).
 * A program's own failure never throws: it is an `ExecutionResult` with status `failed`.
 */
export class SandboxError extends Error {
  override name = 'SandboxError';
  /** Machine-readable reason. */
  readonly code: SandboxErrorCode;

  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
