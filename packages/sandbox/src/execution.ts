import type { FetchRequestData, FetchResponseData } from './bootstrap/fetch.ts';
import type { EgressAllow } from './egress.ts';
import type { SandboxLimits } from './limits.ts';
import type { RunFile } from './run-file.ts';
import type { SkillHost } from './skill-host.ts';
import type { StateHost } from './state-host.ts';
import type { ToolHost } from './tool-host.ts';

/** Languages `execute` accepts; `ts` code has its types stripped (no type checking). */
export type SandboxLanguage = 'ts' | 'typescript' | 'js' | 'javascript';

/** One program to run. */
export interface ExecutionRequest {
  /** The program: the body of an async function, so top-level `await` and `return` work. */
  code: string;
  /** @default 'ts' */
  lang?: SandboxLanguage | (string & {});
  /** Shorthand for `limits.timeoutMs` (wall clock, ms). */
  timeoutMs?: number;
  /** Shorthand for `limits.memoryLimitMb`. */
  memoryLimitMb?: number;
  /** The tools reachable as `tools.<name>(props)`; none when absent. */
  tools?: ToolHost;
  /** The saved skills reachable as `skills.<name>(input)`, and `skills.save`; no `skills` when absent. */
  skills?: SkillHost;
  /**
   * Receives output, log and tool events in order, all before `result` resolves; a run that did not
   * succeed ends with a `stderr` log event saying why (see `ExecutionResult.stderr`). Throws are
   * ignored.
   */
  onEvent?: (event: SandboxEvent) => void;
  /** Per-execution limits, over the pool's. */
  limits?: Partial<SandboxLimits>;
  /** The durable key-value store the program reaches as `state`; without it `state` calls reject. */
  state?: StateHost;
  /** Decides each `fetch` of the program before it goes out (policies, approvals, a replay log). */
  fetchGate?: FetchGate;
  /**
   * Seeds `Math.random` (a 32-bit integer): the same seed draws the same numbers, so a program run
   * again from the start (a resumed process replaying its calls) takes the same branches. Without it
   * `Math.random` is V8's own.
   */
  randomSeed?: number;
  /**
   * The trust domain of the program (a principal, with its limits): with the pool's `isolation:
   * context`, runs of one domain share an isolate, each in a fresh context, and runs of other domains
   * never do. @default '' (one domain for every run without one)
   */
  trustDomain?: string;
}

/**
 * Runs one `fetch` of a program: lets it go out (`send`: the pool's egress fetch, denied by default,
 * with its address checks; `allow` names the hosts this gate allows besides `allowNet`, asked again
 * for each redirect), answers it itself (a replay log), or refuses it by throwing; an error with a
 * string `code` rejects the program's `fetch` with that `code` (`POLICY_DENIED`).
 */
export interface FetchGate {
  fetch(
    request: FetchRequestData,
    send: (options?: FetchSendOptions) => Promise<FetchResponseData>,
  ): Promise<FetchResponseData>;
}

/** How a {@link FetchGate} sends a request out. */
export interface FetchSendOptions {
  /** The hosts this gate allows besides `allowNet` (asked again for each redirect). */
  allow?: EgressAllow;
  /** The request to send instead of the program's (credentials added by the host). */
  request?: FetchRequestData;
  /** Headers dropped when a redirect leaves the request's host (the ones the host added). */
  hostBound?: readonly string[];
}

/** What a streamed event carries, before it is numbered. */
export type SandboxEventData =
  | { type: 'output'; value: unknown }
  | { type: 'log'; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'tool'; name: string; durationMs: number; isError: boolean }
  /** A file the program made with `output.file()` (an `output.image()` picture is an `output`). */
  | ({ type: 'file' } & RunFile);

/** A streamed event; `seq` starts at 1 and increases by one per event of an execution. */
export type SandboxEvent = { seq: number } & SandboxEventData;

/** How an execution ended. */
export type ExecutionStatus = 'success' | 'failed' | 'timeout' | 'canceled';

/** Why an execution did not succeed; `line`/`column` (1-based) point into the submitted code. */
export interface ExecutionError {
  name: string;
  message: string;
  line?: number;
  column?: number;
  stack?: string;
}

/** The outcome of one execution. */
export interface ExecutionResult {
  status: ExecutionStatus;
  /** `output()` values, then the program's return value if not undefined (structured clones). */
  outputs: unknown[];
  /** The files the program made with `output.file()`, in order (absent: none). */
  files?: RunFile[];
  /** `console.log/info/debug` text, one line per call. */
  stdout: string;
  /**
   * `console.warn/error` text; for a run that did not succeed, then why, as Node prints an uncaught
   * error (`Error: boom` and `    at snippet.ts:1:7`), or `timeout: the run exceeded 30000 ms`, or
   * `canceled: killed by a signal` (also the last `log` event).
   */
  stderr: string;
  error?: ExecutionError;
  /** Wall time from start of the run (not the queue wait) to the end, ms. */
  durationMs: number;
  /** CPU time spent in the isolate, ms. */
  cpuTimeMs: number;
  /** The isolate's used heap at the end, bytes (0 when the isolate was torn down mid-run). */
  heapUsedBytes: number;
  /** True when outputs or logs went past their limit and were dropped. */
  truncated?: boolean;
  /**
   * The isolate that ran it (`id`, unique in the pool: worker pid and isolate number) and which of
   * that isolate's runs it was (`run`, 1 for a fresh isolate). Absent when no isolate started.
   */
  isolate?: { id: string; run: number };
}

/** A started (or queued) execution. */
export interface Execution {
  /** Resolves when the execution ends; never rejects for the program's own failure. */
  readonly result: Promise<ExecutionResult>;
  /**
   * Stops the execution within milliseconds, whatever it is doing (status `canceled`); aborts its
   * tool calls and fetches. Does nothing once it has ended.
   */
  kill(): void;
}
