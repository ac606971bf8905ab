import type { ToolHost } from '@mci/sandbox';

// The part of `@mci/sandbox`'s pool the process manager relies on, written structurally so that the
// real `SandboxPool` (issue 5) satisfies it and a fast in-memory executor can stand in for logic tests.

/** An event streamed by a running execution, in order (`seq` is the execution's own counter). */
export type SandboxEventLike =
  | { type: 'output'; seq?: number; value: unknown }
  | { type: 'log'; seq?: number; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'tool'; seq?: number; name: string; durationMs: number; isError: boolean };

/** What an execution ends with (the sandbox's `ExecutionResult`). */
export interface ExecutionResultLike {
  status: 'success' | 'failed' | 'timeout' | 'canceled';
  outputs: unknown[];
  stdout: string;
  stderr: string;
  error?: { name: string; message: string; line?: number; column?: number; stack?: string };
  durationMs: number;
  truncated?: boolean;
}

/** One running program: its result, and `kill()` (ends it with status `canceled`). */
export interface ExecutionLike {
  readonly result: Promise<ExecutionResultLike>;
  kill(): void;
}

/** The request of one execution. */
export interface ExecuteRequestLike {
  code: string;
  lang?: string;
  timeoutMs?: number;
  memoryLimitMb?: number;
  tools?: ToolHost;
  onEvent?: (event: SandboxEventLike) => void;
}

/** A pool of sandboxes (`SandboxPool` from `@mci/sandbox`). `size` is its number of workers. */
export interface SandboxPoolLike {
  readonly size: number;
  execute(request: ExecuteRequestLike): ExecutionLike;
}
