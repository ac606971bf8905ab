import type { CheckLanguage, CheckReport, Checker } from '@mci/check';
import type { Redactor } from '@mci/schema';
import {
  type CallSummary,
  type CheckMode,
  type DistributiveOmit,
  encodeOutputValue,
  type FileOutput,
  type ProcessState,
  type ProcessStatus,
  type RunError,
  runFileUri,
  type ServerEvent,
} from '@mci/protocol';
import type { Execution, ExecutionResult, FetchGate, RunFile, ToolHost } from '@mci/sandbox';
import type { Replay } from '../approvals/approval-store.ts';
import type { AskedCall, CallRefused, GatedTools } from '../approvals/gated-tools.ts';
import { checkOutcome } from '../check/check-outcome.ts';
import { ByteRateBudget } from './byte-rate-budget.ts';
import type { ExecutionPool, SandboxEventBody } from './process-manager-types.ts';
import type { StatsCounters } from './process-stats.ts';
import type { EventRoute, ProcessStore, StoredCall, StoredProcess } from './process-store.ts';
import {
  type DroppedOutput,
  fitText,
  MAX_OUTPUT_EVENTS_PER_RUN,
  truncationNote,
} from './run-output-limits.ts';
import { type RunFields, toRunError, wireDuration } from './snapshots.ts';
import type { RunTrace } from '../tracing/run-spans.ts';
import { traceExecution } from '../tracing/traced-execution.ts';

/**
 * How long a killed run may take to confirm before it is ended `canceled` anyway (the sandbox promises
 * 50 ms; this only guards against a sandbox that never answers).
 */
export const KILL_GUARD_MS = 2000;

/**
 * Slack past a run's timeout after which the manager stops waiting for the sandbox and ends the run
 * `timeout` itself (the sandbox enforces timeouts; this guards against one that never answers).
 */
export const WATCHDOG_SLACK_MS = 5000;

/**
 * Sandbox events one run delivers (stores and sends) per event-loop turn; the rest wait for the next
 * turn, so a flood arriving in one burst never holds the event loop for its whole length and requests
 * (`/healthz`, other clients) are served between the slices.
 */
export const EVENTS_PER_TURN = 256;

/** The error of runs that were running when the server stopped. */
export const INTERRUPTED_MESSAGE = 'interrupted: the server stopped during this run';

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
  startedAtMs?: number;
  /** How much of the run's outputs and logs arrived as events (the final result may hold more). */
  received?: { outputs: number; stdout: number; stderr: number };
  /** Output events delivered (at most {@link MAX_OUTPUT_EVENTS_PER_RUN}). */
  delivered?: number;
  /** The run's bytes per second of outputs and logs. */
  budget?: ByteRateBudget;
  /** What the run's limits dropped, for the note at its end. */
  dropped?: DroppedOutput;
  /**
   * Sandbox events not delivered yet, in arrival order; `next` is the first of them. At most
   * {@link EVENTS_PER_TURN} are delivered per event-loop turn.
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

/** A sandbox event waiting for delivery; a tool call's event carries the call's record summary. */
type QueuedEvent = SandboxEventBody | (Extract<SandboxEventBody, { type: 'tool' }> & { call?: CallSummary });

/** What the run controller needs from the manager. */
export interface RunHooks {
  store: ProcessStore;
  stats: StatsCounters;
  /** Emits an event; `persist(seq)` runs before listeners see it. */
  emit(event: DistributiveOmit<ServerEvent, 'seq'>, route: EventRoute, persist?: (seq: number) => void): void;
  /** Persists and announces a state change of `live` (handles idle). */
  transition(live: LiveProcess, from: { state: ProcessState; status: ProcessStatus }): void;
  /** A started run ended (its sandbox slot is free), after `cpuTimeMs` of sandbox CPU time when it ran. */
  finished(live: LiveProcess, cpuTimeMs?: number): void;
  /** Bytes of outputs and logs one run may deliver per second (bursts of twice that). */
  outputBytesPerSecond: number;
  /** Takes the server's secret values out of outputs, logs and errors before they are stored or sent. */
  redactor?: Redactor | undefined;
  /**
   * The tools run `live` sees and the gate of its `fetch` calls (policy checks and its call log), when
   * approvals are on.
   */
  toolsFor?(
    live: LiveProcess,
    tools: ToolHost | undefined,
  ): ToolHost & FetchGate & Pick<GatedTools, 'claimToolCall'>;
  /** A run that asked for an approval has stopped (its slot is free): suspend it. */
  suspend?(live: LiveProcess): void;
  /** Checks programs before they run; absent: programs run unchecked. */
  checker?: Pick<Checker, 'check'> | undefined;
  /** The check mode of a process that gives none. @default 'block' */
  checkMode?: CheckMode | undefined;
  /** A check could not be done (it timed out, the checker failed): the run goes on unchecked. */
  checkUnavailable?(live: LiveProcess, error: unknown): void;
}

type Shape = { state: ProcessState; status: ProcessStatus };
const shapeOf = (record: StoredProcess): Shape => ({ state: record.state, status: record.status });
const now = () => new Date().toISOString();
/** Reads a file's bytes as text, refusing anything that is not UTF-8. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Runs processes in the sandbox pool and drives their run through running, terminating and idle. */
export class RunController {
  readonly #hooks: RunHooks;

  constructor(hooks: RunHooks) {
    this.#hooks = hooks;
  }

  /** queued -> running: hands the program to the pool. */
  start(live: LiveProcess, pool: ExecutionPool, tools: ToolHost | undefined): void {
    const { record, run } = live;
    const from = shapeOf(record);
    record.state = run.state = 'running';
    run.startedAt = now();
    live.startedAtMs = performance.now();
    live.received = { outputs: 0, stdout: 0, stderr: 0 };
    live.delivered = 0;
    live.budget = new ByteRateBudget(this.#hooks.outputBytesPerSecond);
    this.#hooks.store.updateRun(record.pid, run.run, { state: 'running', startedAt: run.startedAt });
    this.#hooks.stats.runsStarted++;
    this.#hooks.transition(live, from);
    live.toolEvents = 0;
    const mode = record.check ?? this.#hooks.checkMode ?? 'block';
    const checker = this.#hooks.checker;
    if (!checker || mode === 'off') {
      this.#execute(live, pool, tools);
      return;
    }
    live.checking = true;
    checker.check(record.code, record.lang as CheckLanguage).then(
      (report) => this.#checked(live, pool, tools, mode, report),
      (error: unknown) => {
        this.#hooks.checkUnavailable?.(live, error);
        this.#checked(live, pool, tools, mode, undefined);
      },
    );
  }

  /** Runs a checked program, or ends its run `failed` when the check blocks it (nothing ran). */
  #checked(
    live: LiveProcess,
    pool: ExecutionPool,
    tools: ToolHost | undefined,
    mode: CheckMode,
    report: CheckReport | undefined,
  ): void {
    live.checking = false;
    if (live.done) return;
    if (live.killRequested) {
      this.#finish(live, { ...failure(new Error('killed')), status: 'canceled', error: undefined });
      return;
    }
    const { record, run } = live;
    const { refused, warnings } = checkOutcome(mode, report);
    if (warnings.length > 0) {
      run.warnings = this.#redactValue(warnings);
      this.#hooks.store.updateRun(record.pid, run.run, { warnings: run.warnings });
    }
    if (!refused) {
      this.#execute(live, pool, tools);
      return;
    }
    // The program never ran: its run ends failed with the findings, and its stderr says so.
    this.#emitLog(live, 'stderr', `${refused.name}: ${refused.message}\n`);
    run.durationMs = Math.round((report?.durationMs ?? 0) * 1000) / 1000;
    this.#end(live, 'failed', refused);
    this.#hooks.finished(live);
  }

  /** Hands the program of a started run to the pool. */
  #execute(live: LiveProcess, pool: ExecutionPool, tools: ToolHost | undefined): void {
    const { record, run } = live;
    const gated = this.#hooks.toolsFor?.(live, tools);
    live.audit = gated;
    const gatedTools = gated && tools ? gated : tools;
    const traced = traceExecution(live.trace?.context, gatedTools, gated, this.#hooks.redactor);
    const runTools = traced ? traced.tools : gatedTools;
    const fetchGate = traced ? traced.fetchGate : gated;
    let execution: Execution;
    try {
      execution = pool.execute({
        code: record.code,
        lang: record.lang,
        timeoutMs: record.timeoutMs,
        memoryLimitMb: record.memoryLimitMb,
        ...(runTools === undefined ? {} : { tools: runTools }),
        ...(fetchGate && { fetchGate }),
        // The same numbers when a resumed run replays the program.
        randomSeed: seedOf(record.pid, run.run),
        // Runs of one principal may share an isolate (a fresh context each); others never do.
        trustDomain: record.owner,
        onEvent: (event) => this.#onEvent(live, event),
      });
    } catch (error) {
      traced?.end(failure(error));
      this.#finish(live, failure(error));
      return;
    }
    if (traced) execution.result.then(traced.end, (error: unknown) => traced.end(failure(error)));
    live.execution = execution;
    live.watchdog = setTimeout(() => {
      execution.kill();
      this.#finish(live, {
        ...failure(new Error(`the sandbox did not end the run at its timeout of ${record.timeoutMs} ms`)),
        status: 'timeout',
      });
    }, record.timeoutMs + WATCHDOG_SLACK_MS);
    live.watchdog.unref();
    // A listener of the `running` event may have killed it before the pool answered.
    if (live.killRequested) execution.kill();
    execution.result.then(
      (result) => this.#finish(live, result),
      (error: unknown) => this.#finish(live, failure(error)),
    );
  }

  /** running -> terminating; the run ends idle/canceled when the sandbox confirms. */
  kill(live: LiveProcess): void {
    const { record, run } = live;
    // A run being suspended has ended in the sandbox: the suspension sees the kill and cancels it.
    if (live.done && live.asked) live.killRequested = true;
    if (record.state !== 'running' || live.done) return;
    const from = shapeOf(record);
    live.killRequested = true;
    record.state = run.state = 'terminating';
    this.#hooks.store.updateRun(record.pid, run.run, { state: 'terminating' });
    this.#hooks.transition(live, from);
    live.execution?.kill();
    live.killTimer = setTimeout(() => {
      this.#finish(live, {
        ...failure(new Error('the sandbox did not confirm the kill in time')),
        status: 'canceled',
      });
    }, KILL_GUARD_MS);
    live.killTimer.unref();
  }

  /** queued -> idle/canceled at once (never started). */
  cancelQueued(live: LiveProcess): void {
    if (live.record.state !== 'queued') return;
    this.#end(live, 'canceled', undefined);
  }

  /** A run that stopped at a call needing an approval: running -> suspended (it holds no slot). */
  suspend(live: LiveProcess, pendingApprovals: string[]): void {
    const { record, run } = live;
    const from = shapeOf(record);
    run.pendingApprovals = pendingApprovals;
    record.state = run.state = 'suspended';
    record.status = run.status = null;
    this.#hooks.store.updateRun(record.pid, run.run, { state: 'suspended', status: null });
    this.#hooks.transition(live, from);
  }

  /** A suspended process killed, or whose suspension could not be stored: -> idle with `status`. */
  endSuspended(live: LiveProcess, status: 'canceled' | 'failed', error?: RunError): void {
    this.#end(live, status, error);
  }

  /** running/terminating after a restart, or on a node that stopped -> idle/failed, "interrupted". */
  interrupt(live: LiveProcess, message = INTERRUPTED_MESSAGE): void {
    this.#end(live, 'failed', { name: 'Error', message });
  }

  /**
   * Queues a sandbox event. The queue is delivered from the next event-loop turn on, at most
   * {@link EVENTS_PER_TURN} events per turn, adjacent log texts of one stream in a slice joined into
   * one event (order kept), so a console flood costs one event per slice.
   */
  #onEvent(live: LiveProcess, sandboxEvent: SandboxEventBody): void {
    // A tool call's record is the one that settled just before its event.
    let event: QueuedEvent = sandboxEvent;
    if (sandboxEvent.type === 'tool') {
      const call = live.audit?.claimToolCall(sandboxEvent.name);
      if (call) event = { ...sandboxEvent, call };
    }
    // Once a run stops to ask, what it does until it stops (the kill's own stderr line included) is
    // not delivered: the resumed run does it again.
    if (live.done || !live.received || live.asked) return;
    if (live.queue) {
      live.queue.events.push(event);
      return;
    }
    live.queue = { events: [event], next: 0 };
    setImmediate(() => this.#flush(live));
  }

  /** Delivers the next slice of the queued events of `live`; ends the run once all are out and it has ended. */
  #flush(live: LiveProcess): void {
    const queue = live.queue;
    if (!queue) return;
    const end = Math.min(queue.events.length, queue.next + EVENTS_PER_TURN);
    let log: { stream: 'stdout' | 'stderr'; parts: string[] } | undefined;
    const endLog = () => {
      if (log) this.#deliver(live, { type: 'log', stream: log.stream, text: log.parts.join('') });
      log = undefined;
    };
    for (let i = queue.next; i < end; i++) {
      const event = queue.events[i]!;
      if (event.type === 'log') {
        if (log?.stream !== event.stream) {
          endLog();
          log = { stream: event.stream, parts: [] };
        }
        log.parts.push(event.text);
        continue;
      }
      endLog();
      this.#deliver(live, event);
    }
    endLog();
    queue.next = end;
    if (end < queue.events.length) {
      setImmediate(() => this.#flush(live));
      return;
    }
    live.queue = undefined;
    if (live.result) this.#finish(live, live.result);
  }

  #deliver(live: LiveProcess, event: QueuedEvent): void {
    if (live.done || !live.received) return;
    const { pid } = live.record;
    const { run } = live.run;
    const route = routeOf(live.record);
    switch (event.type) {
      case 'output': {
        live.received.outputs++;
        // Delivered by an earlier attempt of this run (a resumed run replays its program).
        if (live.received.outputs <= (live.replay?.delivered.outputs ?? 0)) break;
        if ((live.delivered ?? 0) >= MAX_OUTPUT_EVENTS_PER_RUN) {
          this.#dropped(live, 'overCount').outputs++;
          break;
        }
        // One encoding from here on: the store, the events and every interface carry this JSON.
        const value = this.#redactValue(encodeOutputValue(event.value));
        if (live.budget && !live.budget.take(Buffer.byteLength(JSON.stringify(value) ?? ''))) {
          this.#dropped(live, 'overRate').outputs++;
          break;
        }
        live.delivered = (live.delivered ?? 0) + 1;
        this.#hooks.emit({ type: 'output', pid, run, ...wireRoute(route), value }, route, (seq) =>
          this.#hooks.store.appendOutput(pid, run, seq, value),
        );
        break;
      }
      case 'log': {
        const skip = (live.replay?.delivered[event.stream] ?? 0) - live.received[event.stream];
        live.received[event.stream] += event.text.length;
        const text = this.#fitLog(live, skip > 0 ? event.text.slice(skip) : event.text);
        if (text !== '') this.#emitLog(live, event.stream, text);
        break;
      }
      case 'file':
        this.#deliverFile(live, event);
        break;
      case 'tool':
        live.toolEvents = (live.toolEvents ?? 0) + 1;
        if (live.toolEvents <= (live.replay?.delivered.tools ?? 0)) break;
        this.#hooks.stats.toolCalls++;
        if (event.isError) this.#hooks.stats.toolErrors++;
        this.#hooks.emit(
          {
            type: 'tool',
            pid,
            run,
            ...wireRoute(route),
            name: event.name,
            durationMs: wireDuration(event.durationMs),
            isError: event.isError,
            ...('call' in event && event.call && { call: event.call }),
          },
          route,
        );
        break;
    }
  }

  /**
   * Stores a file the program made and delivers the output value that points at it
   * (`{type: 'file', name, mimeType, size, uri}`; see `FileOutput`). The bytes count against the
   * sandbox's output limit, not the byte rate: they are stored, not sent to subscribers.
   */
  #deliverFile(live: LiveProcess, file: RunFile): void {
    live.files ??= new Set();
    if (live.files.has(file.name)) return;
    live.files.add(file.name);
    // Delivered by an earlier attempt of this run (a resumed run makes its files again, in order).
    if (live.files.size <= (live.replay?.delivered.files ?? 0)) return;
    if ((live.delivered ?? 0) >= MAX_OUTPUT_EVENTS_PER_RUN) {
      this.#dropped(live, 'overCount').outputs++;
      return;
    }
    const { pid } = live.record;
    const { run } = live.run;
    const route = routeOf(live.record);
    const data = this.#redactFile(file.data);
    const value: FileOutput = {
      type: 'file',
      name: file.name,
      mimeType: file.mimeType,
      size: data.byteLength,
      uri: runFileUri(pid, run, file.name),
    };
    live.delivered = (live.delivered ?? 0) + 1;
    this.#hooks.store.putFile(pid, run, { name: file.name, mimeType: file.mimeType, data });
    this.#hooks.emit({ type: 'output', pid, run, ...wireRoute(route), value }, route, (seq) =>
      this.#hooks.store.appendOutput(pid, run, seq, value),
    );
  }

  /**
   * The bytes of a file with the server's secrets taken out when they are UTF-8 text; other bytes
   * (pictures, archives) are kept as they are.
   */
  #redactFile(data: Uint8Array): Uint8Array {
    const redactor = this.#hooks.redactor;
    if (!redactor) return data;
    let text: string;
    try {
      text = UTF8.decode(data);
    } catch {
      return data;
    }
    const redacted = redactor.redact(text);
    return redacted === text ? data : Buffer.from(redacted);
  }

  /** Records a drop of `live` for `reason`: the run is truncated. */
  #dropped(live: LiveProcess, reason: 'overRate' | 'overCount'): DroppedOutput {
    live.run.truncated = true;
    live.dropped ??= { outputs: 0, logBytes: 0, overRate: false, overCount: false };
    live.dropped[reason] = true;
    return live.dropped;
  }

  /** The longest start of `text` the run's byte budget takes; the rest is dropped. */
  #fitLog(live: LiveProcess, text: string): string {
    if (!live.budget) return text;
    const fitted = fitText(live.budget, text);
    if (fitted.droppedBytes > 0) this.#dropped(live, 'overRate').logBytes += fitted.droppedBytes;
    return fitted.text;
  }

  #emitLog(live: LiveProcess, stream: 'stdout' | 'stderr', raw: string): void {
    const text = this.#hooks.redactor ? this.#hooks.redactor.redact(raw) : raw;
    const { pid } = live.record;
    const { run } = live.run;
    const route = routeOf(live.record);
    this.#hooks.emit({ type: 'log', pid, run, ...wireRoute(route), stream, text }, route, (seq) =>
      this.#hooks.store.appendLog(pid, run, seq, stream, text),
    );
  }

  /** Ends the stderr of a run that lost outputs or logs to the server's limits with a note saying so. */
  #noteDropped(live: LiveProcess): void {
    if (live.dropped)
      this.#emitLog(live, 'stderr', truncationNote(live.dropped, this.#hooks.outputBytesPerSecond));
  }

  /** Ends a started run with `result`, once the events queued before it are delivered. */
  #finish(live: LiveProcess, result: ExecutionResult): void {
    if (live.done) return;
    if (live.queue) {
      // The first result stands (the sandbox's, or a guard's when the sandbox did not answer).
      live.result ??= result;
      return;
    }
    clearTimeout(live.killTimer);
    clearTimeout(live.watchdog);
    if (live.asked && !live.killRequested && this.#hooks.suspend) {
      // Stopped to ask: what was delivered stays, the run waits suspended for the decision.
      live.done = true;
      this.#hooks.finished(live, result.cpuTimeMs);
      this.#hooks.suspend(live);
      return;
    }
    // The final result is authoritative: deliver what did not arrive as events (a returned value).
    const received = live.received ?? { outputs: 0, stdout: 0, stderr: 0 };
    for (const value of result.outputs.slice(received.outputs))
      this.#deliver(live, { type: 'output', value });
    for (const file of result.files ?? []) this.#deliverFile(live, file);
    for (const stream of ['stdout', 'stderr'] as const) {
      const text = result[stream];
      if (typeof text === 'string' && text.length > received[stream]) {
        this.#deliver(live, { type: 'log', stream, text: text.slice(received[stream]) });
      }
    }
    this.#noteDropped(live);
    const durationMs =
      Math.round((performance.now() - (live.startedAtMs ?? performance.now())) * 1000) / 1000;
    live.run.durationMs = durationMs;
    if (result.truncated) live.run.truncated = true;
    this.#hooks.stats.recordDuration(durationMs);
    const status = live.killRequested ? 'canceled' : live.diverged ? 'failed' : result.status;
    const error = live.diverged
      ? { name: 'ReplayError', message: `REPLAY_DIVERGED: ${live.diverged.message}` }
      : result.error && toRunError(result.error);
    this.#end(live, status, error);
    this.#hooks.finished(live, result.cpuTimeMs);
  }

  #redactValue<T>(value: T): T {
    return this.#hooks.redactor ? this.#hooks.redactor.redactValue(value) : value;
  }

  #end(live: LiveProcess, status: NonNullable<ProcessStatus>, raw: RunError | undefined): void {
    const error = this.#redactValue(raw);
    const { record, run } = live;
    const from = shapeOf(record);
    record.state = run.state = 'idle';
    record.status = run.status = status;
    run.endedAt = now();
    if (error) run.error = error;
    this.#hooks.store.updateRun(record.pid, run.run, {
      state: 'idle',
      status,
      endedAt: run.endedAt,
      ...(run.durationMs === undefined ? {} : { durationMs: run.durationMs }),
      ...(error ? { error } : {}),
      ...(run.truncated ? { truncated: true } : {}),
    });
    this.#hooks.transition(live, from);
  }
}

/** The `ref` and `streamId` an `output`, `log` or `tool` event carries (those the process has). */
export function wireRoute(route: EventRoute): { ref?: string; streamId?: string } {
  return {
    ...(route.ref !== undefined && { ref: route.ref }),
    ...(route.streamId !== undefined && { streamId: route.streamId }),
  };
}

/** The route of a process's events. */
export function routeOf(record: StoredProcess): EventRoute {
  const route: EventRoute = { owner: record.owner, pid: record.pid };
  if (record.ref !== undefined) route.ref = record.ref;
  if (record.metadata?.streamId !== undefined) route.streamId = record.metadata.streamId;
  return route;
}

/** The `Math.random` seed of run `run` of process `pid` (the same for every attempt of the run). */
function seedOf(pid: number, run: number): number {
  return (Math.imul(pid, 0x9e3779b1) ^ Math.imul(run, 0x85ebca6b)) | 0;
}

function failure(error: unknown): ExecutionResult {
  const cause = error instanceof Error ? error : new Error(String(error));
  return {
    status: 'failed',
    outputs: [],
    stdout: '',
    stderr: '',
    error: { name: cause.name, message: cause.message },
    durationMs: 0,
    cpuTimeMs: 0,
    heapUsedBytes: 0,
  };
}
