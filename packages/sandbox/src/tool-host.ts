/**
 * The MCI result of one tool call (the shape `@mci/tools` returns): the MCP `CallToolResult` plus
 * `error` and `metadata`. Declared structurally so the sandbox needs no runtime dependency on the
 * tools package.
 */
export interface ToolResult {
  isError: boolean;
  content: Array<{ type: string }>;
  error?: string;
  metadata?: Record<string, unknown>;
  structuredContent?: unknown;
}

/**
 * The tools an execution can call as `tools.<name>(props)`. `@mci/tools`' `createToolRunner(...)`
 * fits; any object with these two methods does.
 */
export interface ToolHost {
  /** The tools the sandbox exposes, by name (names need not be identifiers). */
  list(): Array<{ name: string }>;
  /**
   * Runs one tool. `options.signal` aborts when the execution is killed or times out; the host should
   * stop the work (kill a CLI process, abort a request). A throw rejects the call in the sandbox.
   */
  execute(name: string, props: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult>;
}
