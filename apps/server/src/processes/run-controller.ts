import type { Checker, CheckLanguage, CheckReport } from '@mci/check';
import type { CheckMode, ProcessState, ProcessStatus, RunError } from '@mci/protocol';
import type { Execution, ExecutionResult, FetchGate, SkillHost, StateHost, ToolHost } from '@mci/sandbox';
import type { GatedTools } from '../approvals/gated-tools.ts';
import { checkOutcome } from '../check/check-outcome.ts';
import { traceExecution } from '../tracing/traced-execution.ts';
import { ByteRateBudget } from './byte-rate-budget.ts';
import type { LiveProcess } from './live-process.ts';
import type { ExecutionPool } from './process-manager-types.ts';
import type { StoredProcess } from './process-store.ts';
import { type OutputHooks, RunOutput } from './run-output.ts';
import { toRunError } from './snapshots.ts';

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

/** The error of runs that were running when the server stopped. */
export const INTERRUPTED_MESSAGE = 'interrupted: the server stopped during this run';

/** What the run controller needs from the manager (and, for delivering events, {@link OutputHooks}). */
export interface RunHooks extends OutputHooks {
  /** Persists and announces a state change of `live` (handles idle). */
  transition(live: LiveProcess, from: { state: ProcessState; status: ProcessStatus }): void;
  /** A started run ended (its sandbox slot is free), after `cpuTimeMs` of sandbox CPU time when it ran. */
  finished(live: LiveProcess, cpuTimeMs?: number): void;
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
  /** The `state` a run of `record` reads and writes; absent: `state` calls reject. */
  stateFor?: ((record: StoredProcess) => StateHost) | undefined;
  /**
   * The saved skills a run of `record` starts with (read before its check, which reads their
   * declarations); absent: runs have no `skills`.
   */
  skillsFor?: ((record: StoredProcess) => Promise<RunSkillSet>) | undefined;
  /** Checks programs before they run; absent: programs run unchecked. */
  checker?: Pick<Checker, 'check'> | undefined;
  /** The check mode of a process that gives none. @default 'block' */
  checkMode?: CheckMode | undefined;
  /** A check could not be done (it timed out, the checker failed): the run goes on unchecked. */
  checkUnavailable?(live: LiveProcess, error: unknown): void;
}

/** The skills of one run: what its sandbox calls, and their declarations for its check. */
export interface RunSkillSet {
  host: SkillHost;
  /** `interface Skills { ... }` declaring them ('' for none). */
  declarations: string;
}

type Shape = { state: ProcessState; status: ProcessStatus };
const shapeOf = (record: StoredProcess): Shape => ({ state: record.state, status: record.status });
const now = () => new Date().toISOString();

/** Runs processes in the sandbox pool and drives their run through running, terminating and idle. */
export class RunController {
  readonly #hooks: RunHooks;
  readonly #output: RunOutput;

  constructor(hooks: RunHooks) {
    this.#hooks = hooks;
    this.#output = new RunOutput(hooks, (live) => this.#finish(live, live.result!));
  }

  /** queued -> running: hands the program to the pool. */
  start(live: LiveProcess, pool: ExecutionPool, tools: ToolHost | undefined): void {
    const { record, run } = live;
    const from = shapeOf(record);
    record.state = run.state = 'running';
    run.startedAt = now();
    live.received = { outputs: 0, stdout: 0, stderr: 0 };
    live.delivered = 0;
    live.budget = new ByteRateBudget(this.#hooks.outputBytesPerSecond);
    this.#hooks.store.updateRun(record.pid, run.run, { state: 'running', startedAt: run.startedAt });
    this.#hooks.stats.runsStarted++;
    this.#hooks.transition(live, from);
    live.toolEvents = 0;
    const skillsFor = this.#hooks.skillsFor;
    if (!skillsFor) {
      this.#check(live, pool, tools, undefined);
      return;
    }
    live.checking = true;
    // A run whose skills cannot be read runs without them (its `skills` calls then fail).
    skillsFor(record).then(
      (skills) => this.#check(live, pool, tools, skills),
      () => this.#check(live, pool, tools, undefined),
    );
  }

  /** Checks the program of a started run (with its skills' declarations), or runs it unchecked. */
  #check(
    live: LiveProcess,
    pool: ExecutionPool,
    tools: ToolHost | undefined,
    skills: RunSkillSet | undefined,
  ): void {
    const { record } = live;
    const mode = record.check ?? this.#hooks.checkMode ?? 'block';
    const checker = this.#hooks.checker;
    if (!checker || mode === 'off') {
      if (live.checking) {
        live.checking = false;
        if (live.done) return;
        if (live.killRequested) {
          this.#finish(live, { ...failure(new Error('killed')), status: 'canceled', error: undefined });
          return;
        }
      }
      this.#execute(live, pool, tools, skills);
      return;
    }
    live.checking = true;
    checker.check(record.code, record.lang as CheckLanguage, skills?.declarations).then(
      (report) => this.#checked(live, pool, tools, mode, report, skills),
      (error: unknown) => {
        this.#hooks.checkUnavailable?.(live, error);
        this.#checked(live, pool, tools, mode, undefined, skills);
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
    skills: RunSkillSet | undefined,
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
      run.warnings = this.#output.redactValue(warnings);
      this.#hooks.store.updateRun(record.pid, run.run, { warnings: run.warnings });
    }
    if (!refused) {
      this.#execute(live, pool, tools, skills);
      return;
    }
    // The program never ran: its run ends failed with the findings, and its stderr says so.
    this.#output.emitLog(live, 'stderr', `${refused.name}: ${refused.message}\n`);
    run.durationMs = Math.round((report?.durationMs ?? 0) * 1000) / 1000;
    this.#end(live, 'failed', refused);
    this.#hooks.finished(live);
  }

  /** Hands the program of a started run to the pool. */
  #execute(
    live: LiveProcess,
    pool: ExecutionPool,
    tools: ToolHost | undefined,
    skills: RunSkillSet | undefined,
  ): void {
    const { record, run } = live;
    const gated = this.#hooks.toolsFor?.(live, tools);
    live.audit = gated;
    const gatedTools = gated && tools ? gated : tools;
    const traced = traceExecution(live.trace?.context, gatedTools, gated, this.#hooks.redactor);
    const runTools = traced ? traced.tools : gatedTools;
    const fetchGate = traced ? traced.fetchGate : gated;
    const state = this.#hooks.stateFor?.(record);
    let execution: Execution;
    try {
      execution = pool.execute({
        code: record.code,
        lang: record.lang,
        timeoutMs: record.timeoutMs,
        memoryLimitMb: record.memoryLimitMb,
        ...(runTools === undefined ? {} : { tools: runTools }),
        ...(fetchGate && { fetchGate }),
        ...(skills && { skills: skills.host }),
        ...(state && { state }),
        // The same numbers when a resumed run replays the program.
        randomSeed: seedOf(record.pid, run.run),
        // Runs of one principal may share an isolate (a fresh context each); others never do.
        trustDomain: record.owner,
        onEvent: (event) => this.#output.queue(live, event),
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
      this.#output.deliver(live, { type: 'output', value });
    for (const file of result.files ?? []) this.#output.deliverFile(live, file);
    for (const stream of ['stdout', 'stderr'] as const) {
      const text = result[stream];
      if (typeof text === 'string' && text.length > received[stream]) {
        this.#output.deliver(live, { type: 'log', stream, text: text.slice(received[stream]) });
      }
    }
    this.#output.noteDropped(live);
    // The program's own time, from when its isolate started it: the check before it and the wait for a
    // sandbox worker (the first runs of a pool whose workers are still starting) are not part of it.
    const durationMs = Math.round(result.durationMs * 1000) / 1000;
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

  #end(live: LiveProcess, status: NonNullable<ProcessStatus>, raw: RunError | undefined): void {
    const error = this.#output.redactValue(raw);
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
