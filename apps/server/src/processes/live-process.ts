import type { Execution, ExecutionResult } from '@mci/sandbox';
import type { Replay } from '../approvals/approval-store.ts';
import type { AskedCall, CallRefused, GatedTools } from '../approvals/gated-tools.ts';
import type { RunTrace } from '../tracing/run-spans.ts';
import type { ByteRateBudget } from './byte-rate-budget.ts';
import type { StoredCall, StoredProcess } from './process-store.ts';
import type { QueuedEvent } from './run-output.ts';
import type { DroppedOutput } from './run-output-limits.ts';
import type { RunFields } from './snapshots.ts';

/** A process that is not idle: its record, its current run, and what the scheduler needs. */
export interface LiveProcess {
  record: StoredProcess;
  run: RunFields;
  /** Queued but waiting for the previous process of its stream (not in the run queue yet). */
  held: boolean;
  killRequested: boolean;
  /** Set once the run is idle: late sandbox events and results are ignored. */
  done: boolean;
  /** Called when the process becomes idle. */
  waiters: Array<() => void>;
  execution?: Execution;
  /** The program is being checked (it has no execution yet). */
  checking?: boolean;
  /** How much of the run's outputs and logs arrived as events (the final result may hold more). */
  received?: { outputs: number; stdout: number; stderr: number };
  /** Output events delivered (at most `MAX_OUTPUT_EVENTS_PER_RUN`). */
  delivered?: number;
  /** The run's bytes per second of outputs and logs. */
  budget?: ByteRateBudget;
  /** What the run's limits dropped, for the note at its end. */
  dropped?: DroppedOutput;
  /**
   * Sandbox events not delivered yet, in arrival order; `next` is the first of them. At most
   * `EVENTS_PER_TURN` are delivered per event-loop turn.
   */
  queue?: { events: QueuedEvent[]; next: number };
  /** The run's result, held until its queued events are delivered. */
  result?: ExecutionResult;
  killTimer?: NodeJS.Timeout;
  watchdog?: NodeJS.Timeout;
  /** The names of the files this attempt of the run made (delivered, or by an earlier attempt). */
  files?: Set<string>;
  /** `tool` events that arrived in this attempt of the run. */
  toolEvents?: number;
  /** What a resumed run replays: its earlier attempts' calls, and what they delivered (skipped now). */
  replay?: Replay;
  /** The call this attempt stopped at to ask for an approval: the run is suspended when it ends. */
  asked?: AskedCall;
  /** The gate of the run's calls: the record of each tool call, for its `tool` event. */
  audit?: Pick<GatedTools, 'claimToolCall'>;
  /** The records of the run's calls whose result was cut, kept whole for its resume (stored when it asked). */
  cutCalls?: StoredCall[];
  /** The resumed run made other calls than its log says: it ends failed with this error. */
  diverged?: CallRefused;
  /** The run's span, when tracing is on (docs/operations.md, "Traces"). */
  trace?: RunTrace | undefined;
}
