/**
 * What went wrong at the tools boundary. `execute` throws only `TOOL_NOT_FOUND`; a tool's own failure
 * is an `isError` result, never a throw.
 *
 * - `TOOL_NOT_FOUND`: no enabled tool has that name.
 * - `MCP_SERVER_UNAVAILABLE`: an MCP server could not be started, connected or listed.
 * - `MCP_CACHE_INVALID`: a cached MCP toolset file could not be read or written.
 * - `RUNNER_CLOSED`: the runner was closed.
 */
export type ToolErrorCode =
  | 'TOOL_NOT_FOUND'
  | 'MCP_SERVER_UNAVAILABLE'
  | 'MCP_CACHE_INVALID'
  | 'RUNNER_CLOSED';

/** The one error class of `@mci/tools`: a string `code` and the standard `cause`. */
export class ToolError extends Error {
  override name = 'ToolError';
  readonly code: ToolErrorCode;

  constructor(code: ToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The message of anything thrown, for error results. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
