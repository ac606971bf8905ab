// The IPC messages between the pool (host) and a sandbox worker process. Sent with Node's
// `advanced` serialization (structured clone), so outputs keep Map, Set, Date and typed arrays.
import type { FetchRequestData } from './bootstrap/fetch.ts';
import type { ExecutionError, ExecutionStatus } from './execution.ts';

/** The limits a worker enforces itself (the host enforces tool, fetch and time limits too). */
export interface WorkerLimits {
  timeoutMs: number;
  memoryLimitMb: number;
  maxOutputBytes: number;
  maxLogBytes: number;
}

/** Host -> worker. */
export type HostMessage =
  | { type: 'execute'; id: number; code: string; lang: 'ts' | 'js'; tools: string[]; limits: WorkerLimits }
  | { type: 'kill'; id: number; status: 'canceled' | 'timeout' }
  | { type: 'settle'; id: number; callId: number; ok: boolean; value: unknown };

/** An event as the worker reports it (the host numbers them). */
export type WorkerEvent =
  | { type: 'output'; value: unknown }
  | { type: 'log'; stream: 'stdout' | 'stderr'; text: string };

/** Worker -> host. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'events'; id: number; events: WorkerEvent[] }
  | { type: 'tool'; id: number; callId: number; name: string; props: unknown }
  | { type: 'fetch'; id: number; callId: number; request: FetchRequestData }
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
    };
