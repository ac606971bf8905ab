// The IPC messages between the pool (host) and a sandbox worker process. Sent with Node's
// `advanced` serialization (structured clone), so outputs keep Map, Set, Date and typed arrays.
import type { FetchRequestData } from './bootstrap/fetch.ts';
import type { ExecutionError, ExecutionStatus } from './execution.ts';
import type { RunFile } from './run-file.ts';
import type { SkillOp } from './skill-host.ts';
import type { StateOp } from './state-host.ts';

/** The limits a worker enforces itself (the host enforces tool, fetch and time limits too). */
export interface WorkerLimits {
  timeoutMs: number;
  memoryLimitMb: number;
  maxOutputBytes: number;
  maxLogBytes: number;
}

/** Host -> worker. */
export type HostMessage =
  | {
      type: 'execute';
      id: number;
      code: string;
      lang: 'ts' | 'js';
      tools: string[];
      /** The skills of `skills.<name>(input)`: name -> function body (see `SkillHost.sources`). */
      skills?: Record<string, string>;
      limits: WorkerLimits;
      /** Seeds `Math.random` (see `ExecutionRequest.randomSeed`). */
      seed?: number;
      /**
       * `isolation: context`: run in the isolate of trust domain `domain` (with this memory limit), in
       * a fresh context; the isolate is retired after `maxRuns` runs or past `maxHeapMb` of used heap.
       * Absent: a fresh isolate for this run alone.
       */
      reuse?: { domain: string; maxRuns: number; maxHeapMb: number };
    }
  | { type: 'kill'; id: number; status: 'canceled' | 'timeout' }
  | { type: 'settle'; id: number; callId: number; ok: boolean; value: unknown };

/**
 * Serialized outputs at least this large (bytes) cross the channel as the bytes the worker measured
 * for the output budget, and the host deserializes them: one V8 serialization fewer in the worker
 * than sending the value (which the channel would serialize again). Smaller ones travel as values.
 */
export const SERIALIZED_OUTPUT_BYTES = 1024;

/** An event as the worker reports it (the host numbers them). */
export type WorkerEvent =
  | { type: 'output'; value: unknown }
  /** An output as `node:v8` `serialize` bytes (see {@link SERIALIZED_OUTPUT_BYTES}). */
  | { type: 'output'; serialized: Uint8Array }
  /** An output as JSON text, as the isolate sent it (values JSON carries exactly; see `clone.ts`). */
  | { type: 'output'; json: string }
  | { type: 'log'; stream: 'stdout' | 'stderr'; text: string }
  /** A file the program made with `output.file()` (checked by the worker, see `run-file.ts`). */
  | ({ type: 'file' } & RunFile);

/** Worker -> host. */
export type WorkerMessage =
  /** The worker has started; its first isolate is warm. */
  | { type: 'ready' }
  /** The isolate for the next execution is built: an execution sent now starts at once. */
  | { type: 'warm' }
  | { type: 'events'; id: number; events: WorkerEvent[] }
  | { type: 'tool'; id: number; callId: number; name: string; props: unknown }
  /** `tools.search(query, options)` or `tools.describe(name)`: `args` as the program passed them. */
  | { type: 'catalog'; id: number; callId: number; op: 'search' | 'describe'; args: unknown[] }
  | { type: 'fetch'; id: number; callId: number; request: FetchRequestData }
  /** `skills.<name>(input)` (`args`: `[name, input]`, before it runs) or `skills.save(skill)` (`[skill]`). */
  | { type: 'skill'; id: number; callId: number; op: SkillOp; args: unknown[] }
  /** `state.get`, `state.set`, `state.delete` or `state.keys`: `args` as the program passed them. */
  | { type: 'state'; id: number; callId: number; op: StateOp; args: unknown[] }
  | {
      type: 'done';
      id: number;
      /** Events not sent yet, delivered before the result (saves a message per short execution). */
      events?: WorkerEvent[];
      status: ExecutionStatus;
      error?: ExecutionError;
      cpuTimeMs: number;
      heapUsedBytes: number;
      truncated: boolean;
      /** The worker process's resident set size after the run, bytes. */
      rssBytes: number;
      /** The isolate the run had (unique in its worker), and which of its runs this was (1: first). */
      isolate: { id: number; run: number };
    };
