import type { ToolResult } from '@mci/tools';
import type { ToolCatalog } from './tool-catalog.ts';

export type { ToolResult };

/**
 * The tools an execution can call as `tools.<name>(props)`. `@mci/tools`' `createToolRunner(...)`
 * fits; any object with these two methods does (the sandbox needs no runtime part of `@mci/tools`).
 */
export interface ToolHost {
  /** The tools the sandbox exposes, by name (names need not be identifiers). */
  list(): Array<{ name: string }>;
  /**
   * Runs one tool. `options.signal` aborts when the execution is killed or times out; the host should
   * stop the work (kill a CLI process, abort a request). A throw rejects the call in the sandbox
   * (an error with a string `code` gives the sandbox's error that `code`).
   * The result reaches the sandbox as a structured clone.
   */
  execute(name: string, props: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult>;
  /**
   * Answers `tools.search` and `tools.describe` over the listed tools. Without it, those calls
   * reject with an error saying this host has no catalog.
   */
  readonly catalog?: ToolCatalog;
}
