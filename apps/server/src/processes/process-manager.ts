import { createIntentStream, type IntentStream } from '@mci/intent-extractor';
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
import { createMemoryStore } from '../store/memory-store.ts';
import { EventLog, type UnsequencedEvent } from './event-log.ts';
import { checkOption, checkProcessInput, createLimitPolicy, type LimitPolicy } from './limits.ts';
import type {
  CreateProcessInput,
  EventListener,
  ExecutionPool,
  Principal,
  ProcessFilter,
  ProcessManager,
  ProcessManagerOptions,
  ProcessStats,
  ReplayFilter,
  StreamHandle,
} from './process-manager-types.ts';
import { ProcessReader } from './process-reader.ts';
import { AdoptedStream } from './adopted-stream.ts';
import { liveProcessOf, recoverProcesses } from './process-recovery.ts';
import { StatsCounters } from './process-stats.ts';
import type { EventRoute, ProcessStore, StoredProcess } from './process-store.ts';
import { type LiveProcess, RunController, routeOf } from './run-controller.ts';
import { DEFAULT_OUTPUT_BYTES_PER_SECOND } from './run-output-limits.ts';
import { Scheduler } from './scheduler.ts';
import { ServerError } from './server-error.ts';
import { drainLive } from './shutdown-drain.ts';
import { type RunFields, toSnapshot } from './snapshots.ts';
import { DEFAULT_MAX_OPEN_STREAMS, DEFAULT_STREAM_IDLE_MS, StreamRegistry } from './stream-registry.ts';
import type { IntentStreamLimits, StreamHost, StreamSession } from './stream-session.ts';

/** How often (ms) a cluster node with processes waiting for a slot asks the other nodes for theirs. */
const SURPLUS_ANNOUNCE_MS = 50;

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
  get maxCodeBytes(): number {
    return this.#policy.maxCodeBytes;
  }
  readonly #pool: ExecutionPool;
  readonly #tools: ToolHost | undefined;
  readonly #store: ProcessStore;
  readonly #policy: LimitPolicy;
  readonly #maxQueue: number;
  readonly #logger: Logger | undefined;
  readonly #createIntentStream: (limits: IntentStreamLimits) => IntentStream;
  readonly #stats = new StatsCounters();
  readonly #concurrency: number;
  readonly #scheduler: Scheduler<LiveProcess>;
  /** Processes that are not idle, by pid. */
  readonly #live = new Map<number, LiveProcess>();
  readonly #reader: ProcessReader;
  readonly #streams: StreamRegistry;
  readonly #events: EventLog;
  readonly #runs: RunController;
  #lastPid: number;
  /** Processes handed over to other nodes of a cluster, until they are idle: pid -> node. */
  readonly #handedOver = new Map<number, string>();
  /** Processes of streams taken over from stopped nodes, by pid. */
  readonly #adoptedStreams = new Map<number, AdoptedStream>();
  #surplusTimer: NodeJS.Timeout | undefined;
  #accepting = true;
  #closing: Promise<void> | undefined;

  constructor(options: ProcessManagerOptions) {
    this.#pool = options.pool;
    this.#tools = options.tools;
    this.#store = options.store ?? createMemoryStore();
    this.#policy = createLimitPolicy(options);
    this.#maxQueue = checkOption('maxQueue', options.maxQueue, 1000);
    const concurrency = checkOption('concurrency', options.concurrency, Math.max(1, options.pool.size));
    this.#concurrency = concurrency;
    this.responsePipeBytes = checkOption(
      'responsePipeBytes',
      options.responsePipeBytes,
      DEFAULT_RESPONSE_PIPE_BYTES,
    );
    if (this.responsePipeBytes < MIN_RESPONSE_PIPE_BYTES) {
      throw new RangeError(`responsePipeBytes must be at least ${MIN_RESPONSE_PIPE_BYTES}`);
    }
    this.#logger = options.logger;
    this.#events = new EventLog(this.#store, options.logger);
    this.#reader = new ProcessReader(this.#store, this.#live, this.#events);
    this.#createIntentStream = options.createIntentStream ?? createIntentStream;
    this.#streams = new StreamRegistry(
      checkOption('maxOpenStreams', options.maxOpenStreams, DEFAULT_MAX_OPEN_STREAMS),
      checkOption('streamIdleMs', options.streamIdleMs, DEFAULT_STREAM_IDLE_MS),
    );
    this.#runs = new RunController({
      store: this.#store,
      stats: this.#stats,
      emit: (event, route, persist) => this.emit(event, route, persist),
      transition: (live, from) => this.#transition(live, from),
      finished: () => this.#scheduler.finished(),
      outputBytesPerSecond: checkOption(
        'outputBytesPerSecond',
        options.outputBytesPerSecond,
        DEFAULT_OUTPUT_BYTES_PER_SECOND,
      ),
    });
    this.#scheduler = new Scheduler(concurrency, (live) => this.#runs.start(live, this.#pool, this.#tools));
    this.#lastPid = this.#store.counters().lastPid;
    // After a restart on a durable store: queue queued processes again, end interrupted runs.
    for (const live of recoverProcesses(this.#store, this.#stats)) {
      this.#live.set(live.record.pid, live);
      if (live.record.state === 'queued') this.#scheduler.enqueue(live.record.owner, live);
      else this.#runs.interrupt(live);
    }
    const cluster = this.#store.cluster;
    if (cluster) {
      const { lastSeq } = cluster.attach({
        events: (events) => {
          for (const { event } of events)
            if (event.type === 'process' && event.state === 'idle') this.#handedOver.delete(event.pid);
          this.#events.deliver(events);
        },
        kill: (pid) => {
          const live = this.#live.get(pid);
          const next = this.#handedOver.get(pid);
          if (live) this.#kill(live);
          else if (next !== undefined) cluster.sendKill(next, pid);
        },
        adopted: (processes) => this.#adopt(processes),
        surplus: (node) => {
          const slots = this.#scheduler.free;
          if (this.#accepting && slots > 0 && this.#scheduler.waiting === 0) cluster.sendOffer(node, slots);
        },
        offer: (node, slots) => this.#handOver(node, slots),
        take: (pids) => this.#take(pids),
      });
      this.#events.startAt(lastSeq);
      // While processes wait for a slot here, other nodes are asked for theirs.
      this.#surplusTimer = setInterval(() => {
        if (this.#scheduler.waiting > 0) cluster.announceSurplus();
      }, SURPLUS_ANNOUNCE_MS).unref();
    }
  }

  // --- processes -------------------------------------------------------------------------------

  create(input: CreateProcessInput, principal: Principal): ProcessSnapshot {
    return this.#reader.snapshot(this.#create(input, principal, undefined, false));
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
    const checked = checkProcessInput(this.#policy, input);
    const autorun = input.autorun ?? true;
    if (autorun) this.#checkQueueRoom();
    const record: StoredProcess = {
      pid: this.#store.cluster?.nextPid() ?? ++this.#lastPid,
      owner: principal.id,
      ...checked,
      createdAt: new Date().toISOString(),
      ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      state: 'idle',
      status: null,
      runs: 0,
    };
    this.#store.putProcess(record);
    this.#stats.add('idle', null);
    this.#stats.processesCreated++;
    if (session) this.#streams.attach(record.pid, session);
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
    // In a cluster another node may have changed the process since it was read here.
    if (!this.#live.has(pid)) this.#store.cluster?.forget(pid);
    const record = this.#reader.visible(pid, principal);
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
      return this.#reader.snapshot(pid);
    }
    if (signal !== 'kill') {
      throw new ServerError('VALIDATION', `signal must be kill or run, got ${JSON.stringify(signal)}`, {
        path: 'signal',
      });
    }
    const live = this.#live.get(pid);
    if (!live) {
      const cluster = this.#store.cluster;
      const node = this.#handedOver.get(pid) ?? cluster?.nodeOf(pid);
      if (cluster && node !== undefined && node !== cluster.node) {
        cluster.sendKill(node, pid);
        return this.#reader.snapshot(pid);
      }
      throw new ServerError('CONFLICT', `process ${pid} is idle: there is nothing to kill`);
    }
    this.#kill(live);
    return this.#reader.snapshot(pid);
  }

  get(pid: number, principal: Principal): ProcessSnapshot {
    return this.#reader.get(pid, principal);
  }

  getRun(pid: number, run: number, principal: Principal): RunSnapshot {
    return this.#reader.getRun(pid, run, principal);
  }

  getResult(pid: number, principal: Principal): ProcessResult {
    return this.#reader.getResult(pid, principal);
  }

  getCode(pid: number, principal: Principal): string {
    return this.#reader.visible(pid, principal).code;
  }

  list(filter: ProcessFilter, principal: Principal): ProcessSnapshot[] {
    return this.#reader.list(filter, principal);
  }

  delete(pid: number, principal: Principal): void {
    const record = this.#reader.visible(pid, principal);
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
    this.#reader.visible(pid, principal);
    const live = this.#live.get(pid);
    if (live) await new Promise<void>((resolve) => live.waiters.push(resolve));
    else if (this.#store.cluster) await this.#idleElsewhere(pid);
    return this.#reader.snapshot(pid);
  }

  /** Resolves once process `pid`, run by another node of the cluster (if any), is idle. */
  #idleElsewhere(pid: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const stop = this.onEvent((event) => {
        if (event.type === 'process' && event.pid === pid && event.state === 'idle') done();
      });
      const done = () => {
        stop();
        resolve();
      };
      // Listening first, so an end committed while the state is read is not missed.
      this.#store.cluster?.forget(pid);
      if (this.#store.cluster?.nodeOf(pid) === undefined) done();
    });
  }

  // --- streams ---------------------------------------------------------------------------------

  openStream(
    input: { streamId: string; ref?: string; autorun?: boolean },
    principal: Principal,
  ): StreamHandle {
    this.checkAccepting();
    // A code line longer than the code limit makes its block too large anyway; a prose line is cut there.
    const limits = { maxBlockLength: this.maxCodeBytes, maxLineLength: this.maxCodeBytes + 1 };
    return this.#streams.open(this, () => this.#createIntentStream(limits), input, principal);
  }

  getStream(streamId: string, principal: Principal): StreamHandle {
    return this.#streams.get(streamId, principal);
  }

  checkStream(streamId: string, principal: Principal): void {
    try {
      this.#streams.get(streamId, principal);
    } catch (error) {
      const owner = principal.role === 'operator' ? {} : { owner: principal.id };
      if (this.#store.listProcesses({ streamId, ...owner }).length === 0) throw error;
    }
  }

  release(pid: number): boolean {
    const live = this.#live.get(pid);
    if (!live?.held) return false;
    live.held = false;
    this.#scheduler.enqueue(live.record.owner, live);
    return true;
  }

  isIdle(pid: number): boolean {
    return !this.#live.has(pid);
  }

  result(pid: number): ProcessResult | undefined {
    return this.#reader.result(pid);
  }

  checkAccepting(): void {
    if (!this.#accepting) throw new ServerError('SHUTTING_DOWN', 'the server is shutting down');
  }

  // --- events ----------------------------------------------------------------------------------

  emit(event: UnsequencedEvent, route: EventRoute, persist?: (seq: number) => void): void {
    this.#events.emit(event, route, persist);
  }

  onEvent(listener: EventListener): () => void {
    return this.#events.listen(listener);
  }

  replay(since: number, filter: ReplayFilter, principal: Principal): ServerEvent[] {
    return this.#reader.replay(since, filter, principal);
  }

  lastSeq(): number {
    return this.#events.lastSeq;
  }

  stats(): ProcessStats {
    return this.#stats.snapshot(this.#concurrency);
  }

  // --- shutdown --------------------------------------------------------------------------------

  shutdown(options: { graceMs?: number } = {}): Promise<void> {
    this.#accepting = false;
    this.#scheduler.pause();
    this.#closing ??= this.#shutdown(options.graceMs ?? 10_000);
    return this.#closing;
  }

  async #shutdown(graceMs: number): Promise<void> {
    clearInterval(this.#surplusTimer);
    this.#streams.endAll();
    this.#handOverQueue();
    await drainLive(this.#live, (live) => this.#kill(live), graceMs);
    await this.#store.close();
  }

  // --- internals -------------------------------------------------------------------------------

  /**
   * Another node of the cluster has `slots` free sandbox slots: hands it up to that many of the
   * processes waiting here, oldest first (not those of streams, which run here in their order).
   * Callers waiting for them here are answered when they end there.
   */
  #handOver(node: string, slots: number): void {
    if (!this.#store.cluster || !this.#accepting) return;
    this.#transfer(node, this.#takeTransferable(slots));
  }

  /**
   * At shutdown in a cluster: the processes waiting here (but those of streams) go to the other live
   * nodes, in turn, instead of being canceled.
   */
  #handOverQueue(): void {
    const cluster = this.#store.cluster;
    if (!cluster || this.#scheduler.waiting === 0) return;
    let nodes: string[];
    try {
      nodes = cluster.liveNodes();
    } catch (error) {
      this.#logger?.warn({ err: error }, 'queued processes are canceled: the other nodes could not be read');
      return;
    }
    if (nodes.length === 0) return;
    const taken = this.#takeTransferable(this.#scheduler.waiting);
    nodes.forEach((node, i) => {
      this.#transfer(
        node,
        taken.filter((_, j) => j % nodes.length === i),
      );
    });
  }

  #takeTransferable(count: number): LiveProcess[] {
    return this.#scheduler.takeWaiting(
      count,
      (live) => !live.killRequested && !this.#streams.has(live.record.pid),
    );
  }

  /** Hands `taken` (taken out of the run queue) over to `node`. */
  #transfer(node: string, taken: LiveProcess[]): void {
    const cluster = this.#store.cluster;
    if (!cluster || taken.length === 0) return;
    for (const live of taken) {
      const { pid } = live.record;
      this.#live.delete(pid);
      this.#stats.remove(live.record.state, live.record.status);
      this.#handedOver.set(pid, node);
      const waiters = live.waiters.splice(0);
      if (waiters.length > 0)
        void this.#idleElsewhere(pid).then(() => {
          for (const resolve of waiters) resolve();
        });
    }
    cluster.handOver(
      node,
      taken.map((live) => live.record.pid),
    );
    this.#logger?.debug({ node, pids: taken.map((live) => live.record.pid) }, 'processes handed over');
  }

  /**
   * Queued processes handed over by another node: they run here. A node shutting down leaves them in
   * the database, where a live node takes them over once this node's lease is released.
   */
  #take(pids: number[]): void {
    if (!this.#accepting) return;
    for (const pid of pids) {
      if (this.#live.has(pid)) continue;
      const record = this.#store.getProcess(pid);
      if (record?.state !== 'queued') continue;
      const live = liveProcessOf(record, this.#store.getRun(pid, record.runs));
      this.#stats.add(record.state, record.status);
      this.#live.set(pid, live);
      this.#handedOver.delete(pid);
      this.#scheduler.enqueue(record.owner, live);
    }
  }

  /**
   * Takes over processes of cluster nodes that stopped: queued ones run here, the runs of running
   * ones end failed ("interrupted: node NAME stopped").
   */
  #adopt(processes: Array<{ pid: number; node: string }>): void {
    const streams = new Map<string, LiveProcess[]>();
    const interrupted: Array<[LiveProcess, string]> = [];
    for (const { pid, node } of processes) {
      if (this.#live.has(pid)) continue;
      const record = this.#store.getProcess(pid);
      if (!record || record.state === 'idle') continue;
      const live = liveProcessOf(record, this.#store.getRun(pid, record.runs));
      this.#stats.add(record.state, record.status);
      this.#live.set(pid, live);
      this.#logger?.warn({ pid, node }, `process ${pid} taken over from node ${node}, which stopped`);
      const streamId = record.metadata?.streamId;
      if (streamId !== undefined) streams.set(streamId, [...(streams.get(streamId) ?? []), live]);
      if (record.state !== 'queued') interrupted.push([live, node]);
      else if (streamId === undefined) this.#scheduler.enqueue(record.owner, live);
      else live.held = true;
    }
    const adopted: AdoptedStream[] = [];
    for (const [streamId, lives] of streams) {
      const { owner, ref } = lives[0]!.record;
      const stream = new AdoptedStream(
        this,
        { streamId, owner, ...(ref !== undefined && { ref }) },
        this.#store.listProcesses({ streamId }).map((record) => record.pid),
        lives.filter((live) => live.record.state === 'queued').map((live) => live.record.pid),
      );
      for (const live of lives) this.#adoptedStreams.set(live.record.pid, stream);
      adopted.push(stream);
    }
    for (const [live, node] of interrupted) this.#runs.interrupt(live, `interrupted: node ${node} stopped`);
    for (const stream of adopted) stream.start();
  }

  /** In a cluster `maxQueue` counts the processes waiting on every node (the others' as of the last lease renewal). */
  #checkQueueRoom(): void {
    const cluster = this.#store.cluster;
    const queued = this.#stats.byState.queued + (cluster?.queuedElsewhere() ?? 0);
    if (queued >= this.#maxQueue) {
      throw new ServerError(
        'QUEUE_FULL',
        `the queue is full (${this.#maxQueue} processes waiting${cluster ? ' in the cluster' : ''}); retry later`,
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
    if (!hold) this.#scheduler.enqueue(record.owner, live);
  }

  #kill(live: LiveProcess): void {
    if (live.record.state === 'queued') {
      this.#scheduler.remove(live);
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
    this.#streams.processIdle(record.pid);
    const adopted = this.#adoptedStreams.get(record.pid);
    if (adopted) {
      this.#adoptedStreams.delete(record.pid);
      adopted.processIdle(record.pid);
    }
  }

  #emitProcess(record: StoredProcess, run: RunFields | undefined): void {
    this.emit({ type: 'process', ...toSnapshot(record, run) }, routeOf(record));
  }
}
