import ivm from 'isolated-vm';
import type { RunOutcome } from '../bootstrap/bootstrap.ts';
import type { ExecutionError, ExecutionStatus } from '../execution.ts';
import type { HostMessage, WorkerEvent, WorkerMessage } from '../protocol.ts';
import { formatLogArgs } from './console-format.ts';
import { cpuTimeMsSince, heapUsedBytes } from './isolate-figures.ts';
import { isCallId, toFetchRequest } from './isolate-requests.ts';
import { OutputBudget } from './output-budget.ts';
import { checkFile, checkImage } from './run-media.ts';
import type { SandboxContext } from './sandbox-isolate.ts';
import {
  checkFunctionBody,
  isExecutionError,
  LINE_OFFSET,
  prepareSource,
  toExecutionError,
} from './transpile.ts';

type ExecuteMessage = Extract<HostMessage, { type: 'execute' }>;
/** A program's call of a host API other than a tool: `tools.search`/`describe`, `state.*`, `skills.*`. */
type HostOpMessage = Extract<WorkerMessage, { type: 'catalog' | 'state' | 'skill' }>;
/** The `op` of the {@link HostOpMessage} of type `K`. */
type OpOf<K extends HostOpMessage['type']> = Extract<HostOpMessage, { type: K }>['op'];

/** Timers one execution may have pending at once (each is a Node timer in this process). */
const MAX_TIMERS = 10_000;
/** The operations a program can ask of each host API of {@link HostOpMessage}. */
const HOST_OPS: Record<HostOpMessage['type'], ReadonlySet<string>> = {
  catalog: new Set(['search', 'describe'] satisfies OpOf<'catalog'>[]),
  state: new Set(['get', 'set', 'delete', 'keys'] satisfies OpOf<'state'>[]),
  skill: new Set(['input', 'save'] satisfies OpOf<'skill'>[]),
};

const MEMORY_LIMIT = /memory limit/i;

/**
 * One program running in one isolate, on the worker side: compiles and starts it, turns the
 * bootstrap's messages into events and host requests, runs its timers, enforces the wall-clock
 * timeout and the output/log budgets, and ends it (disposing the isolate) on kill.
 *
 * Everything runs in the isolate through isolated-vm's asynchronous API (the program as a script
 * run, each tool/fetch result and timer callback as an `apply` task), so this thread stays free to
 * stream events, fire timers and take a kill while the program runs. isolated-vm delivers the
 * isolate's messages, task results and the outcome to this thread in the order they happened (one
 * FIFO task queue per isolate): a task's messages arrive before its result.
 *
 * Everything arriving from the isolate is untrusted: shapes are checked before use.
 */
export class WorkerExecution {
  readonly id: number;
  readonly #request: ExecuteMessage;
  readonly #sandbox: SandboxContext;
  readonly #post: (message: WorkerMessage) => void;
  readonly #budget: OutputBudget;
  readonly #timers = new Map<number, NodeJS.Timeout>();
  #events: WorkerEvent[] = [];
  /** The names of the files `output.file()` made (one file per name in a run). */
  readonly #fileNames = new Set<string>();
  #flushScheduled = false;
  #deadline: NodeJS.Timeout | undefined;
  #filename = 'snippet.ts';
  #ended = false;
  /** Tasks started in the isolate (settles, timers) whose result has not arrived, by task number. */
  readonly #inFlight = new Set<number>();
  #lastTask = 0;
  /** The run's outcome, held until the task that produced it has reported (see `#finishIfSettled`). */
  #outcome: RunOutcome | undefined;
  #resolveDone!: (settled: boolean) => void;
  /**
   * Resolves once the result has been posted: true when the run ended settled (its context runs no
   * code and its isolate may serve another run), false when its isolate was disposed to stop it.
   */
  readonly done = new Promise<boolean>((resolve) => (this.#resolveDone = resolve));

  constructor(request: ExecuteMessage, sandbox: SandboxContext, post: (message: WorkerMessage) => void) {
    this.id = request.id;
    this.#request = request;
    this.#sandbox = sandbox;
    this.#post = post;
    this.#budget = new OutputBudget(request.limits.maxOutputBytes, request.limits.maxLogBytes);
  }

  async start(): Promise<void> {
    const { code, lang, limits, tools, seed, skills } = this.#request;
    const { isolate, context } = this.#sandbox;
    // Armed first: compiling runs under the deadline too.
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
      const prepared = prepareSource(code, lang, {
        tools,
        ...(seed !== undefined && { seed }),
        ...(skills && { skills }),
      });
      script = isolate.compileScriptSync(prepared.source, {
        filename: prepared.filename,
        lineOffset: LINE_OFFSET,
      });
      // After compiling, so that a plain syntax error is reported with its position.
      checkFunctionBody(prepared);
    } catch (e) {
      return this.#finish('failed', isExecutionError(e) ? e : this.#toError(e), true);
    }
    this.#sandbox.setSink((kind, args) => this.#onMessage(kind, args));
    try {
      const outcome = (await script.run(context, { release: true, promise: true, copy: true })) as RunOutcome;
      if (this.#ended) return;
      if (typeof outcome !== 'object' || outcome === null || typeof outcome.task !== 'number') {
        return this.#finish(
          'failed',
          { name: 'Error', message: 'The program did not report an outcome' },
          true,
        );
      }
      this.#outcome = outcome;
      this.#finishIfSettled();
    } catch (e) {
      this.#onTaskError(e);
    }
  }

  /** Ends the execution now (kill, timeout, fatal error): disposes the isolate, then reports. */
  end(status: ExecutionStatus, error?: ExecutionError): void {
    this.#finish(status, error, false);
  }

  /** Delivers a host answer (tool result, fetch response, or an error) to a pending call, as a task. */
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
      }).copyInto({ release: true });
    }
    this.#task('settle', callId, ok, copy);
  }

  /**
   * Runs `control(op, task, ...args)` in the isolate as a task of its own. The task number lets the
   * outcome say which task produced it (see `RunOutcome.task`).
   */
  #task(op: 'settle' | 'timer', ...args: Array<number | boolean | ivm.Copy<unknown>>): void {
    const task = ++this.#lastTask;
    this.#inFlight.add(task);
    this.#sandbox.control.apply(undefined, [op, task, ...args] as never[]).then(
      () => {
        this.#inFlight.delete(task);
        this.#finishIfSettled();
      },
      (e) => {
        this.#inFlight.delete(task);
        this.#onTaskError(e);
      },
    );
  }

  #toError(e: unknown): ExecutionError {
    if (typeof e === 'object' && e !== null) return toExecutionError(e, this.#filename);
    return { name: 'Error', message: `Uncaught ${typeof e === 'string' ? JSON.stringify(e) : String(e)}` };
  }

  // A task in the isolate failed: an unhandled promise rejection (isolated-vm reports it as the
  // task's error), the memory limit, or the isolate being disposed by `end`. Every message the
  // isolate sent before it has arrived (isolated-vm's order).
  #onTaskError(e: unknown): void {
    if (this.#ended) return;
    const message = e instanceof Error ? e.message : '';
    if (MEMORY_LIMIT.test(message)) {
      this.end('failed', {
        name: 'RangeError',
        message: `The program ran out of memory (memoryLimitMb ${this.#request.limits.memoryLimitMb})`,
      });
    } else {
      this.end('failed', this.#toError(e));
    }
  }

  /**
   * Ends the run once its outcome has arrived and the task that produced it has reported: the
   * outcome arrives first, and an unhandled rejection in that same task (right before the program
   * returned) arrives as the task's failure just after, and must still fail the run. Other tasks
   * still in flight (a timer callback that loops) are stopped by the end.
   */
  #finishIfSettled(): void {
    const outcome = this.#outcome;
    if (!outcome || this.#ended || this.#inFlight.has(outcome.task)) return;
    if (outcome.ok) this.#finish('success', undefined, true);
    else this.#finish('failed', toExecutionError(outcome.error, this.#filename), true);
  }

  #onMessage(kind: unknown, args: unknown[]): void {
    if (this.#ended) return;
    switch (kind) {
      case 'output':
      case 'outputJson': {
        const event = this.#budget.outputEvent(args[0], kind === 'outputJson');
        if (event) this.#push(event);
        return;
      }
      case 'image':
      case 'file':
        this.#onMedia(kind, args[0], args[1]);
        return;
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
      case 'catalog':
      case 'state':
      case 'skill': {
        const [callId, op, opArgs] = args;
        if (!isCallId(callId) || typeof op !== 'string' || !HOST_OPS[kind].has(op) || !Array.isArray(opArgs))
          return;
        this.#flush();
        // HOST_OPS[kind] holds exactly the ops of the `kind` message.
        this.#post({ type: kind, id: this.id, callId, op, args: opArgs } as HostOpMessage);
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
          if (!this.#ended) this.#task('timer', id);
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

  /**
   * `output.image()` and `output.file()`: checks what the isolate sent, counts it against the output
   * budget and answers the call (a refusal rejects the program's promise with the reason). An image
   * is an output value `{type: 'image', mimeType, data}` (base64); a file is its own event.
   */
  #onMedia(kind: 'image' | 'file', callId: unknown, args: unknown): void {
    if (!isCallId(callId)) return;
    const checked = kind === 'image' ? checkImage(args) : checkFile(args);
    if ('error' in checked) {
      this.settle(callId, false, checked.error);
      return;
    }
    if ('file' in checked) {
      const { name } = checked.file;
      if (this.#fileNames.has(name)) {
        this.settle(callId, false, {
          name: 'TypeError',
          message: `output.file(): this run already made a file named ${JSON.stringify(name)}`,
        });
        return;
      }
      this.#fileNames.add(name);
    }
    let event: WorkerEvent;
    let size: number;
    if ('image' in checked) {
      const { mimeType, data } = checked.image;
      const json = JSON.stringify({ type: 'image', mimeType, data: Buffer.from(data).toString('base64') });
      event = { type: 'output', json };
      size = Buffer.byteLength(json);
    } else {
      event = { type: 'file', ...checked.file };
      size = checked.file.data.byteLength;
    }
    const refused = this.#budget.takeMedia(size, `output.${kind}()`);
    if (refused) {
      this.settle(callId, false, { name: 'RangeError', message: refused });
      return;
    }
    this.#push(event);
    this.settle(callId, true, undefined);
  }

  /** Queues an event; the queue goes out once this turn of the event loop is over (one IPC message). */
  #push(event: WorkerEvent): void {
    this.#events.push(event);
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
   * Reports the result. `idle` says the run has settled: with no task in flight the isolate runs no
   * code, so its heap statistics can be read. Otherwise the isolate is disposed first (that is what
   * stops a running program) and its heap is reported as 0. The owner of the context releases it.
   */
  #finish(status: ExecutionStatus, error: ExecutionError | undefined, idle: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#deadline);
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    const { isolate } = this.#sandbox;
    const cpuTimeMs = cpuTimeMsSince(isolate, this.#sandbox.baseCpuTime);
    const settled = idle && this.#inFlight.size === 0;
    if (!settled) this.#sandbox.entry.dispose();
    const heap = settled ? heapUsedBytes(isolate) : 0;
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
      heapUsedBytes: heap,
      truncated: this.#budget.truncated,
      rssBytes: process.memoryUsage.rss(),
      isolate: { id: this.#sandbox.entry.id, run: this.#sandbox.run },
    });
    this.#resolveDone(settled);
  }
}
