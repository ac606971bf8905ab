import type { Logger } from 'pino';
import type { EventListener } from '../processes/process-manager-types.ts';
import type {
  ClusterStore,
  ProcessStore,
  StoredEvent,
  StoredProcess,
  StoredRun,
} from '../processes/process-store.ts';
import type { LiveProcess } from '../processes/live-process.ts';
import { ServerError } from '../processes/server-error.ts';
import { AdoptedStream, type AdoptedStreamHost } from './adopted-stream.ts';
import { PrincipalLoad } from './principal-load.ts';

/** How often (ms) a node with processes waiting for a slot asks the other nodes for theirs. */
const SURPLUS_ANNOUNCE_MS = 50;

/**
 * How long (ms) a kill of a process being handed to this node waits for it to arrive; the hand-over
 * commits before its notice, so it arrives within a round trip to the database unless this node stops.
 */
const KILL_ON_ARRIVAL_MS = 30_000;

/**
 * What a {@link ClusterMember} may do with its node's process manager beyond its public methods: read
 * and change the node's live processes and run queue only through these calls (the manager keeps its
 * maps and counters to itself).
 */
export interface ClusterMemberHost {
  readonly logger: Logger | undefined;
  /** The node's live (not idle) process `pid`, if it runs or waits here. */
  liveProcess(pid: number): LiveProcess | undefined;
  /** Makes a process read from the database live on this node (counted); undefined when it already is. */
  enter(record: StoredProcess, run: StoredRun | undefined): LiveProcess | undefined;
  /** Lets go of live processes handed to another node (no longer live or counted here). */
  release(lives: LiveProcess[]): void;
  /** Puts a live process in the run queue. */
  enqueue(live: LiveProcess): void;
  /**
   * Free sandbox slots and processes waiting for one; `capped`: those of the waiting whose principal
   * runs as many as its quota's `maxRunning` allows across the cluster (no node may start them now).
   */
  slots(): { free: number; waiting: number; capped: number };
  /** Whether principal `owner` runs as many as its quota's `maxRunning` allows across the cluster. */
  capped(owner: string): boolean;
  /** Takes up to `count` waiting processes out of the run queue, oldest first, those `filter` accepts. */
  takeWaiting(count: number, filter: (live: LiveProcess) => boolean): LiveProcess[];
  /** Starts waiting processes that may start now (a principal has fewer runs on other nodes). */
  dispatch(): void;
  /** Whether the node still takes work (false once it shuts down). */
  accepting(): boolean;
  /** Whether `pid` belongs to a stream open on this node (its processes stay here). */
  isStreamProcess(pid: number): boolean;
  kill(live: LiveProcess): void;
  /** Ends the run of a running process `failed` with `message`. */
  interrupt(live: LiveProcess, message: string): void;
  /** Hands committed events to the node's listeners. */
  deliver(events: StoredEvent[]): void;
}

/** A process that is not idle as read from the database, with its latest run. */
type StoredLiveProcess = { record: StoredProcess; run: StoredRun | undefined };

/** The process manager's public side a {@link ClusterMember} uses: streams' results and events. */
export type ClusterManager = AdoptedStreamHost & { onEvent(listener: EventListener): () => void };

/**
 * A process manager's part in a cluster (a store shared by several nodes, see docs/cluster.md): it
 * routes kills to the node that runs a process, hands waiting processes to nodes with free slots
 * and takes those handed to it, takes over the processes of nodes that stopped (running ones end
 * "interrupted", queued ones run here, a stream's in order), and waits for processes that run
 * elsewhere.
 */
export class ClusterMember {
  readonly #cluster: ClusterStore;
  readonly #store: ProcessStore;
  readonly #manager: ClusterManager;
  readonly #host: ClusterMemberHost;
  /** Processes handed over to other nodes, until they are idle: pid -> node. */
  readonly #handedOver = new Map<number, string>();
  /** Kills of processes handed to this node that had not arrived yet: pid -> the timer that forgets it. */
  readonly #killOnArrival = new Map<number, NodeJS.Timeout>();
  /** Processes of streams taken over from stopped nodes, by pid. */
  readonly #adoptedStreams = new Map<number, AdoptedStream>();
  #surplusTimer: NodeJS.Timeout | undefined;
  /** Each principal's processes running and queued on the other nodes. */
  readonly load: PrincipalLoad;

  constructor(cluster: ClusterStore, store: ProcessStore, manager: ClusterManager, host: ClusterMemberHost) {
    this.#cluster = cluster;
    this.#store = store;
    this.#manager = manager;
    this.#host = host;
    this.load = new PrincipalLoad(cluster.node, (pid) => host.liveProcess(pid) !== undefined);
  }

  /**
   * Starts taking part: committed events, kill requests, offers and processes from other nodes.
   * @returns the seq of the last event committed before this node listened.
   */
  async start(): Promise<number> {
    this.load.seeding();
    const { lastSeq } = await this.#cluster.attach({
      events: (events, nodes) => {
        for (const { event } of events)
          if (event.type === 'process' && event.state === 'idle') this.#handedOver.delete(event.pid);
        const freed = this.load.see(events, nodes);
        this.#host.deliver(events);
        if (freed) this.#host.dispatch();
      },
      kill: (pid) => {
        const live = this.#host.liveProcess(pid);
        const next = this.#handedOver.get(pid);
        if (live) this.#host.kill(live);
        else if (next !== undefined) this.#cluster.sendKill(next, pid);
        else
          this.#background(
            this.#cluster.nodeOf(pid).then((node) => {
              if (node === this.#cluster.node) this.#killHere(pid);
            }),
            'the process of a kill',
          );
      },
      adopted: (processes) => this.#background(this.#adopt(processes), 'processes of a stopped node'),
      surplus: (node) => {
        const { free, waiting, capped } = this.#host.slots();
        if (this.#host.accepting() && free > 0 && waiting === capped) this.#cluster.sendOffer(node, free);
      },
      // Processes held by a cluster-wide maxRunning stay: no node may start them now.
      offer: (node, slots) => {
        if (this.#host.accepting())
          this.#transfer(
            node,
            this.#takeTransferable(slots, (live) => !this.#host.capped(live.record.owner)),
          );
      },
      take: (pids) => this.#background(this.#take(pids), 'processes handed over'),
    });
    this.#surplusTimer = setInterval(() => {
      const { waiting, capped } = this.#host.slots();
      if (waiting > capped) this.#cluster.announceSurplus();
    }, SURPLUS_ANNOUNCE_MS).unref();
    this.load.seed(await this.#cluster.loadElsewhere());
    return lastSeq;
  }

  /** Processes waiting in the queues of the other nodes (as of the last lease renewal). */
  queuedElsewhere(): number {
    return this.#cluster.queuedElsewhere();
  }

  /** Drops what this node caches of `pid` (another node may have changed it). */
  forget(pid: number): void {
    this.#cluster.forget(pid);
  }

  /**
   * Claims idle process `record` in the database for its next run on this node.
   * @throws ServerError `CONFLICT` when another node queued it first.
   */
  async claimRun(record: StoredProcess): Promise<void> {
    if (await this.#cluster.claimRun(record.pid, record.runs)) return;
    this.#cluster.forget(record.pid);
    throw new ServerError(
      'CONFLICT',
      `process ${record.pid} was just run through another node: only an idle process can be run`,
    );
  }

  /**
   * Kills `pid`, which is not live on this node when the caller looked: sends the kill to the node that
   * runs it, or, when the database says this node does (a hand-over to it is on its way), kills it here
   * as soon as it arrives.
   * @returns whether a node runs it (false: it is idle).
   */
  async killElsewhere(pid: number): Promise<boolean> {
    const node = this.#handedOver.get(pid) ?? (await this.#cluster.nodeOf(pid));
    if (node === undefined) return false;
    if (node === this.#cluster.node) this.#killHere(pid);
    else this.#cluster.sendKill(node, pid);
    return true;
  }

  /** Kills `pid`, which runs on this node: now if it is live here, else once its hand-over arrives. */
  #killHere(pid: number): void {
    const live = this.#host.liveProcess(pid);
    if (live) {
      this.#host.kill(live);
      return;
    }
    clearTimeout(this.#killOnArrival.get(pid));
    this.#killOnArrival.set(
      pid,
      setTimeout(() => this.#killOnArrival.delete(pid), KILL_ON_ARRIVAL_MS).unref(),
    );
  }

  /** Whether a kill of `pid` waited for it to arrive (and forgets that kill). */
  #takeArrivalKill(pid: number): boolean {
    const timer = this.#killOnArrival.get(pid);
    if (timer === undefined) return false;
    clearTimeout(timer);
    this.#killOnArrival.delete(pid);
    return true;
  }

  /** Resolves once process `pid`, run by another node (if by any), is idle. */
  idleElsewhere(pid: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const stop = this.#manager.onEvent((event) => {
        if (event.type === 'process' && event.pid === pid && event.state === 'idle') done();
      });
      const done = () => {
        stop();
        resolve();
      };
      // Listening first, so an end committed while the state is read is not missed.
      this.#cluster.forget(pid);
      this.#cluster.nodeOf(pid).then(
        (node) => {
          if (node === undefined) done();
        },
        (error: unknown) => {
          stop();
          reject(error);
        },
      );
    });
  }

  /** A process of this node became idle. */
  processIdle(pid: number): void {
    const stream = this.#adoptedStreams.get(pid);
    if (!stream) return;
    this.#adoptedStreams.delete(pid);
    stream.processIdle(pid);
  }

  /**
   * At shutdown: stops asking for slots, and hands the processes waiting here (but those of streams)
   * to the other live nodes in turn, instead of letting them be canceled. The caller has paused the
   * scheduler, so nothing waiting starts meanwhile.
   */
  async stop(): Promise<void> {
    clearInterval(this.#surplusTimer);
    const { waiting } = this.#host.slots();
    if (waiting === 0) return;
    let nodes: string[];
    try {
      nodes = await this.#cluster.liveNodes();
    } catch (error) {
      this.#host.logger?.warn(
        { err: error },
        'queued processes are canceled: the other nodes could not be read',
      );
      return;
    }
    if (nodes.length === 0) return;
    const taken = this.#takeTransferable(waiting);
    nodes.forEach((node, i) => {
      this.#transfer(
        node,
        taken.filter((_, j) => j % nodes.length === i),
      );
    });
  }

  /**
   * Up to `count` waiting processes that may leave this node (not those of streams) and that `also`
   * accepts, oldest first.
   */
  #takeTransferable(count: number, also: (live: LiveProcess) => boolean = () => true): LiveProcess[] {
    return this.#host.takeWaiting(
      count,
      (live) => !live.killRequested && !this.#host.isStreamProcess(live.record.pid) && also(live),
    );
  }

  /**
   * Hands `taken` (out of the run queue) over to `node`. Callers waiting for them here are answered
   * when they end there.
   */
  #transfer(node: string, taken: LiveProcess[]): void {
    if (taken.length === 0) return;
    this.#host.release(taken);
    for (const live of taken) {
      const { pid } = live.record;
      this.#handedOver.set(pid, node);
      const waiters = live.waiters.splice(0);
      if (waiters.length > 0)
        void this.idleElsewhere(pid).then(() => {
          for (const resolve of waiters) resolve();
        });
    }
    const pids = taken.map((live) => live.record.pid);
    this.#cluster.handOver(node, pids);
    this.#host.logger?.debug({ node, pids }, 'processes handed over');
  }

  /** Runs `work` (a handler's reads of the database) in the background; logs its failure. */
  #background(work: Promise<void>, what: string): void {
    work.catch((error: unknown) => this.#host.logger?.error({ err: error }, `${what} could not be read`));
  }

  /**
   * Queued processes handed over by another node: they run here. A node shutting down leaves them in
   * the database, where a live node takes them over once this node's lease is released.
   */
  async #take(pids: number[]): Promise<void> {
    const found: StoredLiveProcess[] = [];
    for (const pid of pids) {
      const stored = this.#host.liveProcess(pid) ? undefined : await this.#read(pid);
      if (stored?.record.state === 'queued') found.push(stored);
    }
    if (this.#host.accepting())
      for (const stored of found) {
        const live = this.#enter(stored);
        if (!live) continue;
        this.#handedOver.delete(live.record.pid);
        this.#host.enqueue(live);
        if (this.#takeArrivalKill(live.record.pid)) this.#host.kill(live);
      }
    // A kill of a process that did not arrive (it ended meanwhile) must not hit a later run.
    for (const pid of pids) this.#takeArrivalKill(pid);
  }

  /**
   * Takes over processes of nodes that stopped: queued ones run here (a stream's one after another),
   * the runs of running ones end failed ("interrupted: node NAME stopped").
   */
  async #adopt(processes: Array<{ pid: number; node: string }>): Promise<void> {
    // Reads first: the processes then become this node's in one step, no kill or event in between.
    const found: Array<StoredLiveProcess & { node: string }> = [];
    for (const { pid, node } of processes) {
      const stored = this.#host.liveProcess(pid) ? undefined : await this.#read(pid);
      if (stored) found.push({ ...stored, node });
    }
    const streamPids = new Map<string, number[]>();
    for (const { record } of found) {
      const streamId = record.metadata?.streamId;
      if (streamId === undefined || streamPids.has(streamId)) continue;
      streamPids.set(
        streamId,
        (await this.#store.listProcesses({ streamId })).map((stored) => stored.pid),
      );
    }
    const streams = new Map<string, LiveProcess[]>();
    const interrupted: Array<[LiveProcess, string]> = [];
    for (const stored of found) {
      const { node } = stored;
      const live = this.#enter(stored);
      if (!live) continue;
      const { record } = live;
      const { pid } = record;
      this.#host.logger?.warn({ pid, node }, `process ${pid} taken over from node ${node}, which stopped`);
      const streamId = record.metadata?.streamId;
      if (streamId !== undefined) streams.set(streamId, [...(streams.get(streamId) ?? []), live]);
      if (record.state !== 'queued') interrupted.push([live, node]);
      else if (streamId === undefined) this.#host.enqueue(live);
      else live.held = true;
    }
    const adopted: AdoptedStream[] = [];
    for (const [streamId, lives] of streams) {
      const { owner, ref } = lives[0]!.record;
      const stream = new AdoptedStream(
        this.#manager,
        { streamId, owner, ...(ref !== undefined && { ref }) },
        streamPids.get(streamId) ?? [],
        lives.filter((live) => live.record.state === 'queued').map((live) => live.record.pid),
      );
      for (const live of lives) this.#adoptedStreams.set(live.record.pid, stream);
      adopted.push(stream);
    }
    for (const [live, node] of interrupted) this.#host.interrupt(live, `interrupted: node ${node} stopped`);
    for (const stream of adopted) stream.start();
  }

  /** Reads process `pid` and its latest run from the database, unless it is idle or gone. */
  async #read(pid: number): Promise<StoredLiveProcess | undefined> {
    const record = await this.#store.getProcess(pid);
    if (!record || record.state === 'idle' || record.state === 'suspended') return undefined;
    return { record, run: await this.#store.getRun(pid, record.runs) };
  }

  /** Makes a process read with {@link ClusterMember.#read} live on this node, unless it already is. */
  #enter({ record, run }: StoredLiveProcess): LiveProcess | undefined {
    return this.#host.enter(record, run);
  }
}
