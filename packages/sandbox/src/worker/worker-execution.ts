import ivm from 'isolated-vm';
import type { RunOutcome } from '../bootstrap/bootstrap.ts';
import type { ExecutionError, ExecutionStatus } from '../execution.ts';
import type { HostMessage, WorkerEvent, WorkerMessage } from '../protocol.ts';
import { formatLogArgs } from './console-format.ts';
import { cpuTimeMsSince, readHeapUsed } from './isolate-figures.ts';
import { isCallId, toFetchRequest } from './isolate-requests.ts';
import { OutputBudget } from './output-budget.ts';
import type { SandboxIsolate } from './sandbox-isolate.ts';
import { isExecutionError, LINE_OFFSET, prepareSource, toExecutionError } from './transpile.ts';

type ExecuteMessage = Extract<HostMessage, { type: 'execute' }>;

/** Timers one execution may have pending at once (each is a Node timer in this process). */
const MAX_TIMERS = 10_000;

/** How long a finished run waits for its tasks in flight to report (ms). */
const TASK_GRACE_MS = 5;

const MEMORY_LIMIT = /memory limit/i;
const SCRIPT_TIMEOUT = /execution timed out/i;

/**
 * Continuations in a row that must have run briefly, as isolate tasks of their own, before tool and
 * fetch results are delivered synchronously (see {@link WorkerExecution.settle}).
 */
const SYNC_AFTER_BRIEF = 3;
/** A continuation longer than this (ms) is not brief: it ends synchronous delivery for the execution. */
const BRIEF_MS = 1;

/**
 * One program running in one isolate, on the worker side: compiles and starts it, turns the
 * bootstrap's messages into events and host requests, runs its timers, enforces the wall-clock
 * timeout and the output/log budgets, and ends it (disposing the isolate) on kill.
 *
 * Everything arriving from the isolate is untrusted: shapes are checked before use.
 */
export class WorkerExecution {
  readonly id: number;
  readonly #request: ExecuteMessage;
  readonly #sandbox: SandboxIsolate;
  readonly #post: (message: WorkerMessage) => void;
  readonly #budget: OutputBudget;
  readonly #timers = new Map<number, NodeJS.Timeout>();
  #events: WorkerEvent[] = [];
  #flushScheduled = false;
  #deadline: NodeJS.Timeout | undefined;
  /** When the wall-clock deadline passes (`performance.now()` time). */
  #deadlineAt = Number.POSITIVE_INFINITY;
  /** Brief continuations in a row (isolate tasks that returned within {@link BRIEF_MS}). */
  #brief = 0;
  /** Set by the first long synchronous continuation: from then on, every delivery is a task. */
  #syncOff = false;
  /** True while this thread runs the isolate (`#runSync`). */
  #inSync = false;
  /** An end asked for while this thread ran the isolate, carried out once it returns. */
  #endAfterSync: { status: ExecutionStatus; error?: ExecutionError } | undefined;
  /** Set when the wait for tasks in flight after the outcome is over (see `#finishWhenDrained`). */
  #graceOver = false;
  #graceTimer: NodeJS.Timeout | undefined;
  /** A task's failure (an unhandled rejection) waiting to end the execution. */
  #failure: ExecutionError | undefined;
  #filename = 'snippet.ts';
  #ended = false;
  /** Messages received from the bootstrap so far. */
  #received = 0;
  /** Tasks this worker has started in the isolate (timers, settles) that have not completed. */
  #tasks = 0;
  /** The run's outcome, held until every message sent before it has arrived. */
  #outcome: RunOutcome | undefined;
  #resolveDone!: () => void;
  /** Resolves once the result has been posted and the isolate disposed. */
  readonly done = new Promise<void>((resolve) => (this.#resolveDone = resolve));

  constructor(request: ExecuteMessage, sandbox: SandboxIsolate, post: (message: WorkerMessage) => void) {
    this.id = request.id;
    this.#request = request;
    this.#sandbox = sandbox;
    this.#post = post;
    this.#budget = new OutputBudget(request.limits.maxOutputBytes, request.limits.maxLogBytes);
  }

  async start(): Promise<void> {
    const { code, lang, limits, tools } = this.#request;
    const { isolate, context } = this.#sandbox;
    // Armed first: even compiling or the script's own top level (code that closes the wrapper
    // function early) runs under the deadline.
    this.#deadlineAt = performance.now() + limits.timeoutMs;
    this.#deadline = setTimeout(
      () =>
        this.end('timeout', {
          name: 'TimeoutError',
          message: `Execution timed out after ${limits.timeoutMs} ms`,
        }),
      limits.timeoutMs,
    );
    this.#filename = lang === 'ts' ? 'snippet.ts' : 'snippet.js';
    let script: ivm.Script;
    try {
      const prepared = prepareSource(code, lang, { tools });
      script = isolate.compileScriptSync(prepared.source, {
        filename: prepared.filename,
        lineOffset: LINE_OFFSET,
      });
    } catch (e) {
      return this.#finish('failed', isExecutionError(e) ? e : this.#toError(e), true);
    }
    this.#sandbox.setSink((kind, args) => this.#onMessage(kind, args));
    try {
      const outcome = (await script.run(context, { release: true, promise: true, copy: true })) as RunOutcome;
      if (this.#ended) return;
      if (typeof outcome !== 'object' || outcome === null || typeof outcome.sent !== 'number') {
        // Only code that closed the wrapper function early gets here.
        return this.#finish(
          'failed',
          { name: 'SyntaxError', message: 'The code must be the body of a function' },
          true,
        );
      }
      this.#outcome = outcome;
      this.#finishWhenDrained();
    } catch (e) {
      this.#onTaskError(e);
    }
  }

  /** Ends the execution now (kill, timeout, fatal error): disposes the isolate, then reports. */
  end(status: ExecutionStatus, error?: ExecutionError): void {
    if (this.#ended) return;
    if (this.#inSync) {
      // Disposing the isolate under its own running code is not allowed: end once it returns.
      this.#endAfterSync ??= { status, error };
      return;
    }
    this.#finish(status, error, false);
  }

  /**
   * Delivers a host answer (tool result, fetch response, or an error) to a pending call: as an
   * isolate task (`apply`, on isolated-vm's threads, leaving this thread free to stream, run timers
   * and take a kill), or, once the program has continued briefly after {@link SYNC_AFTER_BRIEF}
   * calls in a row and no task is in flight, synchronously on this thread (`applySync`, bounded by
   * the deadline), which saves two thread hand-offs per call. The first long continuation ends that
   * for the execution (see docs/sandbox.md, "Tool calls").
   */
  settle(callId: number, ok: boolean, value: unknown): void {
    if (this.#ended) return;
    let copy: ivm.Copy<unknown>;
    try {
      copy = new ivm.ExternalCopy(value).copyInto({ release: true });
    } catch {
      ok = false;
      copy = new ivm.ExternalCopy({
        name: 'Error',
        message: 'The result could not be copied into the sandbox',
      }).copyInto({
        release: true,
      });
    }
    const args = ['settle', callId, ok, copy];
    if (this.#inSync || this.#syncOff || this.#tasks > 0 || this.#brief < SYNC_AFTER_BRIEF) this.#task(args);
    else this.#runSync(args);
  }

  /**
   * Runs `control(...args)` in the isolate on this thread. Only when no task is in flight: the
   * isolate is then idle (this worker starts everything that runs in it), so this never waits for
   * it. The program's continuation runs here too, until it waits again.
   */
  #runSync(args: Array<string | number | boolean | ivm.Copy<unknown>>): void {
    const started = performance.now();
    const left = this.#deadlineAt - started;
    if (left < 1) {
      this.#task(args);
      return;
    }
    this.#inSync = true;
    let failure: unknown;
    try {
      // The last argument tells the bootstrap to send its messages synchronously meanwhile, so
      // outputs and tool calls still go out while a long continuation runs.
      this.#sandbox.control.applySync(undefined, [...args, true] as never[], { timeout: Math.floor(left) });
    } catch (e) {
      failure = e;
    }
    this.#inSync = false;
    if (performance.now() - started > BRIEF_MS) this.#syncOff = true;
    const asked = this.#endAfterSync;
    if (asked) this.end(asked.status, asked.error);
    else if (failure === undefined) this.#finishWhenDrained();
    else if (SCRIPT_TIMEOUT.test(failure instanceof Error ? failure.message : '')) {
      this.end('timeout', {
        name: 'TimeoutError',
        message: `Execution timed out after ${this.#request.limits.timeoutMs} ms`,
      });
    } else this.#onTaskError(failure);
  }

  /** Runs `control(...args)` in the isolate as a task of its own. */
  #task(args: Array<string | number | boolean | ivm.Copy<unknown>>): void {
    this.#tasks++;
    const started = performance.now();
    this.#sandbox.control.apply(undefined, args as never[]).then(
      () => {
        this.#tasks--;
        // The time includes the hand-offs to and from the isolate's thread: an upper bound.
        this.#brief = performance.now() - started <= BRIEF_MS ? this.#brief + 1 : 0;
        this.#finishWhenDrained();
      },
      (e) => {
        this.#tasks--;
        this.#brief = 0;
        this.#onTaskError(e);
        this.#finishWhenDrained();
      },
    );
  }

  #toError(e: unknown): ExecutionError {
    if (typeof e === 'object' && e !== null) return toExecutionError(e, this.#filename);
    return { name: 'Error', message: `Uncaught ${typeof e === 'string' ? JSON.stringify(e) : String(e)}` };
  }

  // A task in the isolate failed: an unhandled promise rejection (isolated-vm reports it as the
  // task's error), the memory limit, or the isolate being disposed by `end`.
  #onTaskError(e: unknown): void {
    if (this.#ended) return;
    const message = e instanceof Error ? e.message : '';
    if (MEMORY_LIMIT.test(message)) {
      this.end('failed', {
        name: 'RangeError',
        message: `The program ran out of memory (memoryLimitMb ${this.#request.limits.memoryLimitMb})`,
      });
    } else {
      // Let messages the isolate sent before the failing task arrive first (best effort: they
      // are queued tasks of this thread).
      const error = this.#toError(e);
      // Recorded now: an outcome that arrives first must not end the execution as a success.
      this.#failure ??= error;
      setImmediate(() => setImmediate(() => this.end('failed', error)));
    }
  }

  /**
   * Ends the run once its outcome and every message sent before it have arrived, and the tasks in
   * flight have reported (at most {@link TASK_GRACE_MS} after the outcome): the outcome can overtake
   * the failure of the task that produced it (an unhandled rejection right before the program
   * returned), which must still fail the run. A task still running after that is stopped by the end.
   */
  #finishWhenDrained(): void {
    const outcome = this.#outcome;
    if (!outcome || this.#received < outcome.sent || this.#ended) return;
    if (this.#tasks > 0 && !this.#graceOver) {
      this.#graceTimer ??= setTimeout(() => {
        this.#graceOver = true;
        this.#finishWhenDrained();
      }, TASK_GRACE_MS);
      return;
    }
    if (this.#failure) this.#finish('failed', this.#failure, true);
    else if (outcome.ok) this.#finish('success', undefined, true);
    else this.#finish('failed', toExecutionError(outcome.error, this.#filename), true);
  }

  #onMessage(kind: unknown, args: unknown[]): void {
    this.#received++;
    if (this.#ended) return;
    this.#handle(kind, args);
    // While this thread runs the isolate, finishing (which disposes it) waits until it returns.
    if (!this.#inSync) this.#finishWhenDrained();
  }

  #handle(kind: unknown, args: unknown[]): void {
    switch (kind) {
      case 'output':
      case 'outputJson': {
        const event = this.#budget.outputEvent(args[0], kind === 'outputJson');
        if (event) this.#push(event);
        return;
      }
      case 'log': {
        if (this.#budget.logsFull) {
          this.#budget.truncated = true;
          return;
        }
        const stream = args[0] === 'stderr' ? 'stderr' : 'stdout';
        const text = this.#budget.takeLog(`${formatLogArgs(args[1], this.#filename)}\n`);
        if (text) this.#push({ type: 'log', stream, text });
        return;
      }
      case 'tool': {
        const [callId, name, props] = args;
        if (!isCallId(callId) || typeof name !== 'string') return;
        this.#flush();
        this.#post({ type: 'tool', id: this.id, callId, name, props });
        return;
      }
      case 'fetch': {
        const [callId, request] = args;
        if (!isCallId(callId)) return;
        const checked = toFetchRequest(request);
        if (!checked) {
          this.settle(callId, false, { name: 'TypeError', message: 'fetch: malformed request' });
          return;
        }
        this.#flush();
        this.#post({ type: 'fetch', id: this.id, callId, request: checked });
        return;
      }
      case 'timer': {
        const [id, delay] = args;
        if (!isCallId(id) || typeof delay !== 'number') return;
        if (this.#timers.size >= MAX_TIMERS) {
          this.end('failed', {
            name: 'RangeError',
            message: `Too many pending timers (at most ${MAX_TIMERS})`,
          });
          return;
        }
        const timer = setTimeout(() => {
          this.#timers.delete(id);
          if (this.#ended) return;
          this.#task(['timer', id]);
        }, delay);
        this.#timers.set(id, timer);
        return;
      }
      case 'clearTimer': {
        const id = args[0] as number;
        clearTimeout(this.#timers.get(id));
        this.#timers.delete(id);
        return;
      }
      case 'fatal':
        this.end('failed', this.#toError(args[0]));
        return;
    }
  }

  #push(event: WorkerEvent): void {
    this.#events.push(event);
    // While this thread runs the isolate, a scheduled flush would wait for it: send at once.
    if (this.#inSync) {
      this.#flush();
      return;
    }
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#events.length === 0) return;
    const events = this.#events;
    this.#events = [];
    this.#post({ type: 'events', id: this.id, events });
  }

  /**
   * Reports the result. `idle` says the run has settled, so the isolate is normally not running code
   * and its heap statistics can be read (see `readHeapUsed`). Otherwise the isolate is disposed at
   * once (that is what stops a running program) and its heap is reported as 0.
   */
  #finish(status: ExecutionStatus, error: ExecutionError | undefined, idle: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#deadline);
    clearTimeout(this.#graceTimer);
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    const { isolate } = this.#sandbox;
    const cpuTimeMs = cpuTimeMsSince(isolate, this.#sandbox.baseCpuTime);
    const report = (heapUsedBytes: number) => {
      // A running program is stopped by disposing its isolate before reporting; a finished one is
      // disposed after, off the result's path.
      if (!idle) this.#sandbox.dispose();
      // Events not flushed yet ride on the result message: one IPC message fewer.
      const events = this.#events;
      this.#events = [];
      this.#post({
        type: 'done',
        id: this.id,
        ...(events.length > 0 ? { events } : {}),
        status,
        error,
        cpuTimeMs,
        heapUsedBytes,
        truncated: this.#budget.truncated,
      });
      this.#sandbox.dispose();
      this.#resolveDone();
    };
    if (idle) readHeapUsed(isolate, this.#tasks > 0, report);
    else report(0);
  }
}
