import { createIntentStream, type IntentStream } from '@mci/intent-extractor';
import type {
  Approval,
  CallPage,
  Page,
  PageRequest,
  ProcessResult,
  ProcessSnapshot,
  ProcessState,
  ProcessStatus,
  RunSnapshot,
  RunSummary,
  ServerEvent,
} from '@mci/protocol';
import type { RunFile, ToolHost } from '@mci/sandbox';
import { context } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { ClusterMember } from '../cluster/cluster-member.ts';
import { createMemoryStore } from '../store/memory-store.ts';
import { inRunContext, traceRunTransition } from '../tracing/run-spans.ts';
import { createClusterHost } from './cluster-host.ts';
import { EventLog, type UnsequencedEvent } from './event-log.ts';
import { checkProcessInput, createLimitPolicy, type LimitPolicy } from './limits.ts';
import type { LiveProcess } from './live-process.ts';
import { managerSettings } from './manager-settings.ts';
import { PidTurns } from './pid-turns.ts';
import type {
  CallPageRequest,
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
import { recoverProcesses } from './process-recovery.ts';
import { StatsCounters } from './process-stats.ts';
import type { EventRoute, ProcessStore, StoredProcess } from './process-store.ts';
import { QueueAdmission } from './queue-admission.ts';
import { QuotaGate } from './quota-gate.ts';
import { LocalQuotaLedger } from './quota-ledger.ts';
import { RunController } from './run-controller.ts';
import { routeOf } from './run-output.ts';
import { Scheduler } from './scheduler.ts';
import { ServerError } from './server-error.ts';
import { drainLive } from './shutdown-drain.ts';
import { type RunFields, toSnapshot } from './snapshots.ts';
import { type OpenStreamInput, StreamRegistry } from './stream-registry.ts';
import type { IntentStreamLimits, StreamHost, StreamSession } from './stream-session.ts';
import { Suspensions } from './suspensions.ts';

/**
 * Creates the process manager: process records and runs, the fair run queue over a sandbox pool,
 * signals, streams of model output, and the event log with a global `seq`.
 *
 * When the store already holds processes (a durable store after a restart), pids and seqs continue
 * after the highest stored ones, queued processes are queued again in their original order, and runs
 * that were running end `failed` ("interrupted: the server stopped during this run"). It resolves
 * once that is done (and, on a store shared by a cluster, once the node takes part in it).
 *
 * @throws RangeError for an invalid option (named in the message).
 * @throws StoreError when the store cannot be read.
 */
export async function createProcessManager(options: ProcessManagerOptions): Promise<ProcessManager> {
  const manager = new DefaultProcessManager(options);
  await manager.start();
  return manager;
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
  /** Whether a new run may wait in the queue, and whether waiting runs may start in the cluster. */
  readonly #admission: QueueAdmission;
  /** The quotas of each principal: admission of new runs, and their `maxRunning` in the scheduler. */
  readonly #quotas: QuotaGate;
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
  /** This node's part in a cluster, when its store is shared. */
  readonly #cluster: ClusterMember | undefined;
  /** Processes waiting for approvals, when approvals are on. */
  readonly #suspensions: Suspensions | undefined;
  readonly #approvals: ProcessManagerOptions['approvals'];
  readonly #sessions: ProcessManagerOptions['sessions'];
  /**
   * Run signals and deletes, one after another per pid: each reads the process, then changes it, so
   * of two run signals sent at once the second finds the process queued.
   */
  readonly #turns = new PidTurns();
  /** Work that must end before the store closes (streams' results being read and sent). */
  readonly #background = new Set<Promise<void>>();
  #accepting = true;
  #closing: Promise<void> | undefined;

  constructor(options: ProcessManagerOptions) {
    this.#pool = options.pool;
    this.#tools = options.tools;
    this.#sessions = options.sessions;
    this.#store = options.store ?? createMemoryStore();
    this.#policy = createLimitPolicy(options);
    const settings = managerSettings(options);
    this.#concurrency = settings.concurrency;
    this.responsePipeBytes = settings.responsePipeBytes;
    this.#logger = options.logger;
    this.#events = new EventLog(this.#store, options.logger);
    this.#reader = new ProcessReader(this.#store, this.#live, this.#events);
    this.#createIntentStream = options.createIntentStream ?? createIntentStream;
    this.#streams = new StreamRegistry(settings.maxOpenStreams, settings.streamIdleMs);
    this.#scheduler = new Scheduler(
      settings.concurrency,
      (live) => this.#runs.start(live, this.#pool, this.#tools),
      (principal) => this.#quotas.maxRunning(principal),
    );
    const cluster = this.#store.cluster;
    if (cluster)
      this.#cluster = new ClusterMember(
        cluster,
        this.#store,
        this,
        createClusterHost({
          logger: this.#logger,
          live: this.#live,
          stats: this.#stats,
          scheduler: this.#scheduler,
          streams: this.#streams,
          events: this.#events,
          capped: (owner) => this.#admission.capped(owner),
          accepting: () => this.#accepting,
          kill: (live) => this.#kill(live),
          interrupt: (live, message) => this.#interrupt(live, message),
        }),
      );
    // A cluster counts per-minute quotas in its database; without them, counts on the node suffice.
    const shared = settings.quotas.windowed ? cluster?.quotas : undefined;
    this.#quotas = new QuotaGate(settings.quotas, shared ?? new LocalQuotaLedger(), this.#cluster?.load);
    this.#admission = new QueueAdmission({
      maxQueue: settings.maxQueue,
      quotas: this.#quotas,
      scheduler: this.#scheduler,
      stats: this.#stats,
      live: this.#live,
      cluster: this.#cluster,
    });
    this.#runs = new RunController({
      store: this.#store,
      stats: this.#stats,
      emit: (event, route, persist) => this.emit(event, route, persist),
      transition: (live, from) => this.#transition(live, from),
      finished: (live, cpuTimeMs) => {
        this.#scheduler.finished(live.record.owner);
        this.#quotas.charge(live.record.owner, cpuTimeMs ?? 0);
      },
      outputBytesPerSecond: settings.outputBytesPerSecond,
      redactor: options.redactor,
      ...(options.approvals && {
        toolsFor: (live: LiveProcess, tools: ToolHost | undefined) =>
          this.#suspensions!.toolsFor(live, tools),
      }),
      suspend: (live) => this.#suspensions?.suspend(live),
      checker: options.checker,
      ...(options.skillsFor && { skillsFor: options.skillsFor }),
      checkMode: options.check,
      ...(options.sessions && { stateFor: options.sessions.stateFor }),
      checkUnavailable: (live, error) =>
        this.#logger?.warn(
          { pid: live.record.pid, err: error },
          'the program ran unchecked: the check failed',
        ),
    });
    this.#approvals = options.approvals;
    if (options.approvals)
      this.#suspensions = new Suspensions(options.approvals, {
        store: this.#store,
        runs: this.#runs,
        logger: this.#logger,
        auditValueBytes: options.auditValueBytes,
        enter: (live) => {
          this.#live.set(live.record.pid, live);
        },
        enqueue: (live) => this.#scheduler.enqueue(live.record.owner, live),
        transition: (live, from) => this.#transition(live, from),
        liveRecord: (pid) => this.#live.get(pid)?.record,
        emit: (event, route) => this.emit(event, route),
        onEvent: (listener) => this.onEvent(listener),
      });
    this.#lastPid = this.#store.counters().lastPid;
  }

  /** Recovers what a durable store holds after a restart, then takes part in the cluster, if any. */
  async start(): Promise<void> {
    // Queue queued processes again, end interrupted runs.
    const queued: LiveProcess[] = [];
    for (const live of await recoverProcesses(this.#store, this.#stats)) {
      this.#live.set(live.record.pid, live);
      if (live.record.state === 'queued') queued.push(live);
      else this.#interrupt(live);
    }
    // A cluster node queues them once it knows the other nodes' runs (cluster-wide maxRunning).
    if (this.#cluster) this.#events.startAt(await this.#cluster.start());
    for (const live of queued)
      if (live.record.state === 'queued' && !live.killRequested)
        this.#scheduler.enqueue(live.record.owner, live);
    this.#approvals?.start(this);
  }

  async resume(pid: number): Promise<void> {
    await this.#turns.run(pid, async () => this.#suspensions?.resume(pid));
  }

  async announce(approval: Approval): Promise<void> {
    await this.#suspensions?.announce(approval);
  }

  // --- processes -------------------------------------------------------------------------------

  async create(input: CreateProcessInput, principal: Principal): Promise<ProcessSnapshot> {
    if (input.session !== undefined) {
      this.checkAccepting();
      input = { ...input, session: await this.openSession(input.session, principal) };
    }
    const autorun = input.autorun ?? true;
    if (autorun) {
      // Refusals that count nothing come first; then the per-minute quotas count the run.
      this.checkAccepting();
      checkProcessInput(this.#policy, input);
      this.#admission.checkRoom(principal);
      await this.#quotas.admit(principal.id);
    }
    let created: { record: StoredProcess; run: RunFields | undefined };
    try {
      const cluster = this.#store.cluster;
      // A burst of creates may use every pid a cluster node reserved: wait for the next block. No
      // await may come between this wait and #create, which takes a pid.
      if (cluster) while (!cluster.pidAvailable()) await cluster.pidReady();
      created = this.#create(input, principal, undefined, false, autorun);
    } catch (error) {
      if (autorun) this.#quotas.refund(principal.id);
      throw error;
    }
    const snapshot = toSnapshot(created.record, created.run);
    await this.#store.committed();
    return snapshot;
  }

  createForStream(input: CreateProcessInput, session: StreamSession, hold: boolean): number {
    // The stream's processes continue the trace of its opening, not of the chunk that closed a block.
    return context.with(session.traceContext, () => this.#create(input, session.principal, session, hold))
      .record.pid;
  }

  /**
   * Creates a process; returns its record and its run (undefined when it was created idle). A run is
   * counted in the principal's quotas here unless the caller did so (`admitted`).
   */
  #create(
    input: CreateProcessInput,
    principal: Principal,
    session: StreamSession | undefined,
    hold: boolean,
    admitted = false,
  ): { record: StoredProcess; run: RunFields | undefined } {
    this.checkAccepting();
    const checked = checkProcessInput(this.#policy, input);
    const autorun = input.autorun ?? true;
    if (autorun) this.#admission.checkRoom(principal);
    if (autorun && !admitted) this.#quotas.admitNow(principal.id);
    let pid: number;
    try {
      pid = this.#store.cluster?.nextPid() ?? ++this.#lastPid;
    } catch (error) {
      if (autorun && !admitted) this.#quotas.refund(principal.id);
      throw error;
    }
    const record: StoredProcess = {
      pid,
      owner: principal.id,
      ...checked,
      createdAt: new Date().toISOString(),
      ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      ...(input.check === undefined ? {} : { check: input.check }),
      ...(typeof input.session === 'string' && { session: input.session }),
      state: 'idle',
      status: null,
      runs: 0,
    };
    this.#store.putProcess(record);
    this.#stats.add('idle', null);
    this.#stats.processesCreated++;
    if (session) this.#streams.attach(record.pid, session);
    if (autorun) return { record, run: this.#queueRun(record, hold).run };
    this.#emitProcess(record, undefined);
    return { record, run: undefined };
  }

  async signal(
    pid: number,
    signal: 'kill' | 'run',
    principal: Principal,
    _options?: { force?: boolean },
  ): Promise<ProcessSnapshot> {
    if (signal === 'run') {
      const live = await this.#turns.run(pid, () => this.#run(pid, principal));
      const snapshot = toSnapshot(live.record, live.run);
      await this.#store.committed();
      return snapshot;
    }
    if (signal !== 'kill') {
      await this.#reader.visible(pid, principal);
      throw new ServerError('VALIDATION', `signal must be kill or run, got ${JSON.stringify(signal)}`, {
        path: 'signal',
      });
    }
    // A live process is killed in the state it has when the signal arrives.
    let live = this.#reader.live(pid, principal);
    if (!live) {
      const record = await this.#reader.visible(pid, principal);
      if (record.state === 'suspended' && (await this.#killSuspended(record, principal)))
        return this.#reader.snapshot(pid);
      live = this.#live.get(pid);
    }
    let snapshot: ProcessSnapshot;
    if (live) {
      this.#kill(live);
      snapshot = toSnapshot(live.record, live.run);
    } else if (await this.#cluster?.killElsewhere(pid)) {
      snapshot = await this.#reader.snapshot(pid);
    } else {
      throw new ServerError('CONFLICT', `process ${pid} is idle: there is nothing to kill`);
    }
    await this.#store.committed();
    return snapshot;
  }

  /** Queues a new run of idle process `pid` (a `run` signal); returns it live. */
  async #run(pid: number, principal: Principal): Promise<LiveProcess> {
    const record = await this.#reader.visible(pid, principal);
    this.checkAccepting();
    const state = this.#live.get(pid)?.record.state ?? record.state;
    if (state !== 'idle') {
      throw new ServerError('CONFLICT', `process ${pid} is ${state}: only an idle process can be run`);
    }
    this.#admission.checkRoom(principal);
    await this.#quotas.admit(principal.id);
    try {
      await this.#cluster?.claimRun(record);
    } catch (error) {
      this.#quotas.refund(principal.id);
      throw error;
    }
    return this.#queueRun(record, false);
  }

  committed(): Promise<void> {
    return this.#store.committed();
  }

  async get(pid: number, principal: Principal): Promise<ProcessSnapshot> {
    const snapshot = await this.#reader.get(pid, principal);
    if (snapshot.state === 'suspended' && this.#suspensions)
      snapshot.pendingApprovals = await this.#suspensions.pendingOf(pid);
    return snapshot;
  }

  getRun(pid: number, run: number, principal: Principal): Promise<RunSnapshot> {
    return this.#reader.getRun(pid, run, principal);
  }

  getFile(pid: number, run: number, name: string, principal: Principal): Promise<RunFile> {
    return this.#reader.getFile(pid, run, name, principal);
  }

  listRuns(pid: number, page: PageRequest, principal: Principal): Promise<Page<RunSummary>> {
    return this.#reader.listRuns(pid, page, principal);
  }

  listCalls(pid: number, run: number, page: CallPageRequest, principal: Principal): Promise<CallPage> {
    return this.#reader.listCalls(pid, run, page, principal);
  }

  getResult(pid: number, principal: Principal): Promise<ProcessResult> {
    return this.#reader.getResult(pid, principal);
  }

  async getCode(pid: number, principal: Principal): Promise<string> {
    return (await this.#reader.visible(pid, principal)).code;
  }

  list(filter: ProcessFilter & PageRequest, principal: Principal): Promise<Page<ProcessSnapshot>> {
    return this.#reader.list(filter, principal);
  }

  async delete(pid: number, principal: Principal): Promise<void> {
    await this.#turns.run(pid, async () => {
      const record = await this.#reader.visible(pid, principal);
      const state = this.#live.get(pid)?.record.state ?? record.state;
      if (state !== 'idle') {
        throw new ServerError('CONFLICT', `process ${pid} is ${state}: only an idle process can be deleted`);
      }
      this.#store.deleteProcess(pid);
      this.#stats.remove(record.state, record.status);
    });
    await this.#store.committed();
  }

  async wait(pid: number, principal: Principal): Promise<ProcessSnapshot> {
    const record = await this.#reader.visible(pid, principal);
    const live = this.#live.get(pid);
    if (live) await new Promise<void>((resolve) => live.waiters.push(resolve));
    else if (record.state === 'suspended') await this.#suspensions?.idle(pid);
    else if (this.#cluster) await this.#cluster.idleElsewhere(pid);
    return this.#reader.snapshot(pid);
  }

  /**
   * Ends a run that was running when its server stopped; an approval it was asking for when it stopped
   * (stored before the process could be suspended) is canceled.
   */
  #interrupt(live: LiveProcess, message?: string): void {
    this.#runs.interrupt(live, message);
    this.#suspensions?.interrupted(live.record.pid);
  }

  /**
   * Kills suspended process `record` (its approval is canceled).
   * @returns false when it is not suspended any more (resumed meanwhile: killed live instead).
   */
  async #killSuspended(record: StoredProcess, principal: Principal): Promise<boolean> {
    if (!this.#suspensions) return false;
    const killed = await this.#turns.run(record.pid, () => this.#suspensions!.kill(record, principal));
    if (killed) await this.#store.committed();
    return killed;
  }

  // --- streams ---------------------------------------------------------------------------------

  openStream(input: OpenStreamInput, principal: Principal): StreamHandle {
    this.checkAccepting();
    // A code line longer than the code limit makes its block too large anyway; a prose line is cut there.
    const limits = { maxBlockLength: this.maxCodeBytes, maxLineLength: this.maxCodeBytes + 1 };
    return this.#streams.open(this, () => this.#createIntentStream(limits), input, principal);
  }

  async openSession(session: string | true, principal: Principal): Promise<string> {
    if (!this.#sessions)
      throw new ServerError('VALIDATION', 'this server keeps no sessions', { path: 'session' });
    return this.#sessions.open(session, principal.id);
  }

  getStream(streamId: string, principal: Principal): StreamHandle {
    return this.#streams.get(streamId, principal);
  }

  async checkStream(streamId: string, principal: Principal): Promise<void> {
    try {
      this.#streams.get(streamId, principal);
    } catch (error) {
      const owner = principal.role === 'operator' ? {} : { owner: principal.id };
      if ((await this.#store.listProcesses({ streamId, ...owner })).length === 0) throw error;
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

  result(pid: number): Promise<ProcessResult | undefined> {
    return this.#reader.result(pid);
  }

  background(work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(
        () => {},
        (error: unknown) => this.#logger?.error({ err: error }, 'a stream result could not be read'),
      )
      .finally(() => this.#background.delete(tracked));
    this.#background.add(tracked);
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

  replay(since: number, filter: ReplayFilter, principal: Principal): Promise<ServerEvent[]> {
    return this.#reader.replay(since, filter, principal);
  }

  lastSeq(): number {
    return this.#events.lastSeq;
  }

  stats(): ProcessStats {
    const live = [...this.#live.values()].map(({ record }) => record);
    return { ...this.#stats.snapshot(this.#concurrency), quotas: this.#quotas.use(live) };
  }

  // --- shutdown --------------------------------------------------------------------------------

  shutdown(options: { graceMs?: number } = {}): Promise<void> {
    this.#accepting = false;
    this.#scheduler.pause();
    this.#closing ??= this.#shutdown(options.graceMs ?? 10_000);
    return this.#closing;
  }

  async #shutdown(graceMs: number): Promise<void> {
    this.#streams.endAll();
    await this.#cluster?.stop();
    await drainLive(this.#live, (live) => this.#kill(live), graceMs);
    // Streams whose last process just ended send their results now.
    while (this.#background.size > 0) await Promise.all(this.#background);
    await this.#store.close();
  }

  // --- internals -------------------------------------------------------------------------------

  /**
   * Starts a new run of an idle process: queued, in the run queue unless `hold` (stream ordering).
   * @returns the process, live (it may have ended already, when the pool refused it at once).
   */
  #queueRun(record: StoredProcess, hold: boolean): LiveProcess {
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
    return live;
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
    traceRunTransition(live);
    inRunContext(live, () =>
      this.#logger?.info(
        { pid: record.pid, run: record.runs, state: record.state, status: record.status, ref: record.ref },
        `process ${record.pid} ${record.state}${record.status ? ` (${record.status})` : ''}`,
      ),
    );
    this.#emitProcess(record, live.run);
    if (record.state === 'suspended') {
      this.#live.delete(record.pid);
      this.#suspensions?.park(live);
      return;
    }
    if (record.state !== 'idle') return;
    live.done = true;
    this.#live.delete(record.pid);
    for (const resolve of live.waiters.splice(0)) resolve();
    this.#streams.processIdle(record.pid);
    this.#cluster?.processIdle(record.pid);
  }

  #emitProcess(record: StoredProcess, run: RunFields | undefined): void {
    this.emit({ type: 'process', ...toSnapshot(record, run) }, routeOf(record));
  }
}
