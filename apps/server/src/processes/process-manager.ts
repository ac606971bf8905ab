import { createIntentStream } from '@mci/intent-extractor';
import type {
  ProcessResult,
  ProcessSnapshot,
  ProcessState,
  ProcessStatus,
  RunSnapshot,
  ServerEvent,
} from '@mci/protocol';
import { DEFAULT_RESPONSE_PIPE_BYTES, MIN_RESPONSE_PIPE_BYTES } from '@mci/protocol';
import type { ToolHost } from '@mci/sandbox';
import type { Logger } from 'pino';
import { FairQueue } from './fair-queue.ts';
import {
  checkCode,
  createLimitPolicy,
  type LimitPolicy,
  normalizeLang,
  normalizeRef,
  resolveLimits,
} from './limits.ts';
import { createMemoryStore } from './memory-store.ts';
import type {
  CreateProcessInput,
  EventListener,
  Principal,
  ProcessFilter,
  ProcessManager,
  ProcessManagerOptions,
  ProcessStats,
  ReplayFilter,
  StreamHandle,
} from './process-manager-types.ts';
import { StatsCounters } from './process-stats.ts';
import type { EventRoute, ProcessStore, StoredProcess } from './process-store.ts';
import { type LiveProcess, RunController, routeOf } from './run-controller.ts';
import type { SandboxPoolLike } from './sandbox-seam.ts';
import { ServerError } from './server-error.ts';
import { type RunFields, toRunSnapshot, toSnapshot } from './snapshots.ts';
import {
  type DistributiveOmit,
  type IntentStreamLike,
  type StreamHost,
  StreamSession,
} from './stream-session.ts';

/** Most finished streams remembered for `getStream` (older ones are forgotten first). */
const MAX_FINISHED_STREAMS = 10_000;

/**
 * Creates the process manager: process records and runs, the fair run queue over a sandbox pool,
 * signals, streams of model output, and the event log with a global `seq`.
 *
 * When the store already holds processes (a durable store after a restart), pids and seqs continue
 * after the highest stored ones, queued processes are queued again in their original order, and runs
 * that were running end `failed` ("interrupted: the server stopped during this run").
 *
 * @throws RangeError for an invalid option (named in the message).
 */
export function createProcessManager(options: ProcessManagerOptions): ProcessManager {
  return new DefaultProcessManager(options);
}

class DefaultProcessManager implements ProcessManager, StreamHost {
  readonly responsePipeBytes: number;
  readonly #pool: SandboxPoolLike;
  readonly #tools: ToolHost | undefined;
  readonly #store: ProcessStore;
  readonly #policy: LimitPolicy;
  readonly #maxQueue: number;
  readonly #concurrency: number;
  readonly #logger: Logger | undefined;
  readonly #createIntentStream: () => IntentStreamLike;
  readonly #stats = new StatsCounters();
  readonly #queue = new FairQueue<LiveProcess>();
  /** Processes that are not idle, by pid. */
  readonly #live = new Map<number, LiveProcess>();
  readonly #streams = new Map<string, StreamSession>();
  readonly #streamOf = new Map<number, StreamSession>();
  readonly #listeners = new Set<EventListener>();
  readonly #runs: RunController;
  #lastPid: number;
  #lastSeq: number;
  #running = 0;
  #accepting = true;
  #closing: Promise<void> | undefined;

  constructor(options: ProcessManagerOptions) {
    this.#pool = options.pool;
    this.#tools = options.tools;
    this.#store = options.store ?? createMemoryStore();
    this.#policy = createLimitPolicy(options);
    this.#maxQueue = positiveOption('maxQueue', options.maxQueue, 1000);
    this.#concurrency = positiveOption('concurrency', options.concurrency, Math.max(1, options.pool.size));
    this.responsePipeBytes = positiveOption(
      'responsePipeBytes',
      options.responsePipeBytes,
      DEFAULT_RESPONSE_PIPE_BYTES,
    );
    if (this.responsePipeBytes < MIN_RESPONSE_PIPE_BYTES) {
      throw new RangeError(`responsePipeBytes must be at least ${MIN_RESPONSE_PIPE_BYTES}`);
    }
    this.#logger = options.logger;
    this.#createIntentStream = options.createIntentStream ?? createIntentStream;
    this.#runs = new RunController({
      store: this.#store,
      stats: this.#stats,
      emit: (event, route, persist) => this.emit(event, route, persist),
      transition: (live, from) => this.#transition(live, from),
      finished: () => {
        this.#running--;
        this.#dispatch();
      },
    });
    const { lastPid, lastSeq } = this.#store.counters();
    this.#lastPid = lastPid;
    this.#lastSeq = lastSeq;
    this.#recover();
  }

  // --- processes -------------------------------------------------------------------------------

  create(input: CreateProcessInput, principal: Principal): ProcessSnapshot {
    return this.#snapshot(this.#create(input, principal, undefined, false));
  }

  createForStream(input: CreateProcessInput, session: StreamSession, hold: boolean): number {
    return this.#create(input, session.principal, session, hold);
  }

  #create(
    input: CreateProcessInput,
    principal: Principal,
    session: StreamSession | undefined,
    hold: boolean,
  ): number {
    this.checkAccepting();
    const code = checkCode(this.#policy, input.code);
    const lang = normalizeLang(input.lang);
    const ref = normalizeRef(input.ref);
    const limits = resolveLimits(this.#policy, input);
    const autorun = input.autorun ?? true;
    if (autorun) this.#checkQueueRoom();
    const record: StoredProcess = {
      pid: ++this.#lastPid,
      owner: principal.id,
      code,
      lang,
      ...(ref === undefined ? {} : { ref }),
      createdAt: new Date().toISOString(),
      ...limits,
      ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      state: 'idle',
      status: null,
      runs: 0,
    };
    this.#store.putProcess(record);
    this.#stats.add('idle', null);
    this.#stats.processesCreated++;
    if (session) this.#streamOf.set(record.pid, session);
    if (autorun) this.#queueRun(record, hold);
    else this.#emitProcess(record, undefined);
    return record.pid;
  }

  signal(
    pid: number,
    signal: 'kill' | 'run',
    principal: Principal,
    _options?: { force?: boolean },
  ): ProcessSnapshot {
    const record = this.#visible(pid, principal);
    if (signal === 'run') {
      this.checkAccepting();
      if (record.state !== 'idle') {
        throw new ServerError(
          'CONFLICT',
          `process ${pid} is ${record.state}: only an idle process can be run`,
        );
      }
      this.#checkQueueRoom();
      this.#queueRun(record, false);
      return this.#snapshot(pid);
    }
    if (signal !== 'kill') {
      throw new ServerError('VALIDATION', `signal must be kill or run, got ${JSON.stringify(signal)}`, {
        path: 'signal',
      });
    }
    const live = this.#live.get(pid);
    if (!live) throw new ServerError('CONFLICT', `process ${pid} is idle: there is nothing to kill`);
    this.#kill(live);
    return this.#snapshot(pid);
  }

  get(pid: number, principal: Principal): ProcessSnapshot {
    this.#visible(pid, principal);
    return this.#snapshot(pid);
  }

  getRun(pid: number, run: number, principal: Principal): RunSnapshot {
    this.#visible(pid, principal);
    const stored = Number.isSafeInteger(run) && run > 0 ? this.#store.getRun(pid, run) : undefined;
    if (!stored) throw new ServerError('NOT_FOUND', `process ${pid} has no run ${run}`, { path: 'run' });
    return toRunSnapshot(stored);
  }

  getResult(pid: number, principal: Principal): ProcessResult {
    this.#visible(pid, principal);
    return this.result(pid)!;
  }

  getCode(pid: number, principal: Principal): string {
    return this.#visible(pid, principal).code;
  }

  list(filter: ProcessFilter, principal: Principal): ProcessSnapshot[] {
    const ref = filter.ref === undefined ? undefined : normalizeRef(filter.ref);
    return this.#store
      .listProcesses({
        ...(filter.state === undefined ? {} : { state: filter.state }),
        ...(filter.status === undefined ? {} : { status: filter.status }),
        ...(ref === undefined ? {} : { ref }),
        ...(principal.role === 'operator' ? {} : { owner: principal.id }),
      })
      .map((record) => this.#snapshotOf(record));
  }

  delete(pid: number, principal: Principal): void {
    const record = this.#visible(pid, principal);
    if (record.state !== 'idle') {
      throw new ServerError(
        'CONFLICT',
        `process ${pid} is ${record.state}: only an idle process can be deleted`,
      );
    }
    this.#store.deleteProcess(pid);
    this.#stats.remove(record.state, record.status);
  }

  async wait(pid: number, principal: Principal): Promise<ProcessSnapshot> {
    this.#visible(pid, principal);
    const live = this.#live.get(pid);
    if (live) await new Promise<void>((resolve) => live.waiters.push(resolve));
    return this.#snapshot(pid);
  }

  // --- streams ---------------------------------------------------------------------------------

  openStream(input: { streamId: string; ref?: string }, principal: Principal): StreamHandle {
    this.checkAccepting();
    const { streamId } = input;
    if (typeof streamId !== 'string' || streamId.trim() === '' || streamId.length > 256) {
      throw new ServerError('VALIDATION', 'streamId must be a non-empty string of at most 256 characters', {
        path: 'streamId',
      });
    }
    if (this.#streams.has(streamId))
      throw new ServerError('CONFLICT', `stream ${streamId} already exists`, { path: 'streamId' });
    const ref = normalizeRef(input.ref);
    const session = new StreamSession(this, this.#createIntentStream(), { streamId, ref, principal });
    this.#streams.set(streamId, session);
    void session.result.then(() => this.#forgetStream(session));
    return session;
  }

  getStream(streamId: string, principal: Principal): StreamHandle {
    const session = this.#streams.get(streamId);
    if (!session || (principal.role !== 'operator' && session.principal.id !== principal.id)) {
      throw new ServerError('NOT_FOUND', `stream ${streamId} not found`, { path: 'streamId' });
    }
    return session;
  }

  release(pid: number): boolean {
    const live = this.#live.get(pid);
    if (!live?.held) return false;
    live.held = false;
    this.#queue.push(live.record.owner, live);
    this.#dispatch();
    return true;
  }

  isIdle(pid: number): boolean {
    return !this.#live.has(pid);
  }

  result(pid: number): ProcessResult | undefined {
    const record = this.#store.getProcess(pid);
    if (!record) return undefined;
    const run = record.runs > 0 ? this.#store.getRun(pid, record.runs) : undefined;
    return {
      ...toSnapshot(record, run),
      outputs: run?.outputs ?? [],
      stdout: run?.stdout ?? '',
      stderr: run?.stderr ?? '',
      ...(run?.truncated ? { truncated: true } : {}),
    };
  }

  checkAccepting(): void {
    if (!this.#accepting) throw new ServerError('SHUTTING_DOWN', 'the server is shutting down');
  }

  // --- events ----------------------------------------------------------------------------------

  emit(
    event: DistributiveOmit<ServerEvent, 'seq'>,
    route: EventRoute,
    persist?: (seq: number) => void,
  ): void {
    const full = { ...event, seq: ++this.#lastSeq } as ServerEvent;
    persist?.(full.seq);
    this.#store.appendEvent(full, route);
    for (const listener of this.#listeners) {
      try {
        listener(full, route);
      } catch (error) {
        this.#logger?.error({ err: error, seq: full.seq }, 'event listener failed');
      }
    }
  }

  onEvent(listener: EventListener): () => void {
    // Wrap so the same function can be added twice and removed independently.
    const entry: EventListener = (event, route) => listener(event, route);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  replay(since: number, filter: ReplayFilter, principal: Principal): ServerEvent[] {
    if (!Number.isSafeInteger(since) || since < 0) {
      throw new ServerError('VALIDATION', 'since must be a non-negative integer', { path: 'since' });
    }
    if (filter.pid === undefined && filter.ref === undefined && !filter.all) {
      throw new ServerError('VALIDATION', 'give one of pid, ref or all', { path: 'pid' });
    }
    if (filter.pid !== undefined) this.#visible(filter.pid, principal);
    const ref = filter.ref === undefined ? undefined : normalizeRef(filter.ref);
    return this.#store
      .eventsSince(since, {
        ...(filter.pid === undefined ? {} : { pid: filter.pid }),
        ...(ref === undefined ? {} : { ref }),
        ...(principal.role === 'operator' ? {} : { owner: principal.id }),
      })
      .map((stored) => stored.event);
  }

  lastSeq(): number {
    return this.#lastSeq;
  }

  stats(): ProcessStats {
    return this.#stats.snapshot();
  }

  // --- shutdown --------------------------------------------------------------------------------

  shutdown(options: { graceMs?: number } = {}): Promise<void> {
    this.#accepting = false;
    this.#closing ??= this.#shutdown(options.graceMs ?? 10_000);
    return this.#closing;
  }

  async #shutdown(graceMs: number): Promise<void> {
    for (const session of this.#streams.values()) session.end();
    for (const live of [...this.#live.values()]) if (live.record.state === 'queued') this.#kill(live);
    const allIdle = () =>
      Promise.all([...this.#live.values()].map((live) => new Promise<void>((r) => live.waiters.push(r))));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([allIdle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const live of [...this.#live.values()]) this.#kill(live);
    await allIdle();
    await this.#store.close();
  }

  // --- internals -------------------------------------------------------------------------------

  #checkQueueRoom(): void {
    if (this.#stats.byState.queued >= this.#maxQueue) {
      throw new ServerError(
        'QUEUE_FULL',
        `the queue is full (${this.#maxQueue} processes waiting); retry later`,
      );
    }
  }

  /** Starts a new run of an idle process: queued, in the run queue unless `hold` (stream ordering). */
  #queueRun(record: StoredProcess, hold: boolean): void {
    const from = { state: record.state, status: record.status };
    record.runs++;
    record.state = 'queued';
    record.status = null;
    const run: RunFields = {
      run: record.runs,
      state: 'queued',
      status: null,
      queuedAt: new Date().toISOString(),
    };
    this.#store.insertRun(record.pid, run.run, { state: 'queued', status: null, queuedAt: run.queuedAt! });
    const live: LiveProcess = { record, run, held: hold, killRequested: false, done: false, waiters: [] };
    this.#live.set(record.pid, live);
    this.#transition(live, from);
    if (!hold) {
      this.#queue.push(record.owner, live);
      this.#dispatch();
    }
  }

  #dispatch(): void {
    if (!this.#accepting) return;
    while (this.#running < this.#concurrency) {
      const live = this.#queue.shift();
      if (!live) return;
      this.#running++;
      this.#runs.start(live, this.#pool, this.#tools);
    }
  }

  #kill(live: LiveProcess): void {
    if (live.record.state === 'queued') {
      this.#queue.delete(live);
      live.held = false;
      this.#runs.cancelQueued(live);
    } else if (live.record.state === 'running') {
      this.#runs.kill(live);
    }
    // terminating: a kill is already under way.
  }

  /** Persists a state change of `live`, counts it, logs it, emits its `process` event, and handles idle. */
  #transition(live: LiveProcess, from: { state: ProcessState; status: ProcessStatus }): void {
    const { record } = live;
    this.#store.updateProcess(record.pid, { state: record.state, status: record.status, runs: record.runs });
    this.#stats.move(from, record);
    this.#logger?.info(
      { pid: record.pid, run: record.runs, state: record.state, status: record.status, ref: record.ref },
      `process ${record.pid} ${record.state}${record.status ? ` (${record.status})` : ''}`,
    );
    this.#emitProcess(record, live.run);
    if (record.state !== 'idle') return;
    live.done = true;
    this.#live.delete(record.pid);
    for (const resolve of live.waiters.splice(0)) resolve();
    this.#streamOf.get(record.pid)?.processIdle(record.pid);
  }

  #emitProcess(record: StoredProcess, run: RunFields | undefined): void {
    this.emit({ type: 'process', ...toSnapshot(record, run) }, routeOf(record));
  }

  #visible(pid: number, principal: Principal): StoredProcess {
    const record =
      this.#live.get(pid)?.record ?? (Number.isSafeInteger(pid) ? this.#store.getProcess(pid) : undefined);
    if (!record || (principal.role !== 'operator' && record.owner !== principal.id)) {
      throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    }
    return record;
  }

  #snapshot(pid: number): ProcessSnapshot {
    const live = this.#live.get(pid);
    if (live) return toSnapshot(live.record, live.run);
    const record = this.#store.getProcess(pid);
    if (!record) throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    return this.#snapshotOf(record);
  }

  #snapshotOf(record: StoredProcess): ProcessSnapshot {
    const live = this.#live.get(record.pid);
    if (live) return toSnapshot(live.record, live.run);
    return toSnapshot(record, record.runs > 0 ? this.#store.getRun(record.pid, record.runs) : undefined);
  }

  #forgetStream(session: StreamSession): void {
    for (const pid of session.pids) this.#streamOf.delete(pid);
    // Finished streams stay reachable by id for a while; Map order is insertion order.
    if (this.#streams.size <= MAX_FINISHED_STREAMS) return;
    for (const [id, other] of this.#streams) {
      if (this.#streams.size <= MAX_FINISHED_STREAMS) break;
      if (other !== session && other.ended) this.#streams.delete(id);
    }
  }

  /** After a restart on a durable store: re-queue queued processes, end interrupted runs. */
  #recover(): void {
    const stored = this.#store.listProcesses({});
    for (const record of stored) this.#stats.add(record.state, record.status);
    const pending = stored
      .filter((record) => record.state !== 'idle')
      .map((record) => ({
        record,
        run: this.#store.getRun(record.pid, record.runs),
        // The seq of its latest event (a queued process's `queued` one) restores the queue order: a run
        // signal queues an older pid after newer ones.
        order: this.#store.eventsSince(0, { pid: record.pid }).at(-1)?.event.seq ?? 0,
      }))
      .sort((a, b) => a.order - b.order || a.record.pid - b.record.pid);
    for (const { record, run } of pending) {
      const live: LiveProcess = {
        record,
        run: run ? stripRun(run) : { run: record.runs, state: record.state, status: null },
        held: false,
        killRequested: false,
        done: false,
        waiters: [],
      };
      this.#live.set(record.pid, live);
      if (record.state === 'queued') this.#queue.push(record.owner, live);
      else this.#runs.interrupt(live);
    }
    this.#dispatch();
  }
}

function stripRun({ outputs, stdout, stderr, pid, ...fields }: RunSnapshot & { pid: number }): RunFields {
  return fields;
}

function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
