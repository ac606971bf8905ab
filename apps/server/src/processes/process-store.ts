import type {
  CallRecord,
  CheckMode,
  ProcessMetadata,
  ProcessState,
  ProcessStatus,
  RunError,
  RunSnapshot,
  ServerEvent,
} from '@mci/protocol';
import type { RunFile } from '@mci/sandbox';
import type { QuotaLedger } from './quota-ledger.ts';

/**
 * Routing information of an event: who owns it (a principal id) and what it concerns, so transports
 * can filter by subscription (`pid`, `ref`, `all`) and ownership without parsing the event.
 */
export interface EventRoute {
  owner: string;
  pid?: number;
  ref?: string;
  streamId?: string;
}

/** A process as stored: everything needed to rebuild its snapshot, plus its code and owner. */
export interface StoredProcess {
  pid: number;
  /** The principal id that created it. */
  owner: string;
  code: string;
  lang: string;
  ref?: string;
  /** ISO 8601. */
  createdAt: string;
  /** Effective limits (defaults applied, clamped to the server maxima). */
  timeoutMs: number;
  memoryLimitMb: number;
  metadata?: ProcessMetadata;
  /** The check mode the process asked for; absent: the server's. */
  check?: CheckMode;
  /** The session it belongs to (docs/sessions.md); absent: none, its state is its own. */
  session?: string;
  state: ProcessState;
  status: ProcessStatus;
  /** Number of runs (the latest run's number; 0 if it never ran). */
  runs: number;
}

/** One run as stored (outputs and logs are appended with {@link ProcessStore.appendOutput}/`appendLog`). */
export type StoredRun = RunSnapshot & { pid: number };

/**
 * One call of a run as stored (see `callRecord`): its audit record, the hash of its whole input, and,
 * for a run that suspended, its whole result when the record's was cut (`replay`: a resumed run
 * answers the call from it).
 */
export type StoredCall = Omit<CallRecord, 'pid' | 'run'> & { inputHash: string; replay?: unknown };

/** The fields of a run that change as it goes (everything but outputs and logs). */
export type RunUpdate = Partial<
  Pick<
    RunSnapshot,
    'state' | 'status' | 'queuedAt' | 'startedAt' | 'endedAt' | 'durationMs' | 'truncated' | 'warnings'
  >
> & { error?: RunError };

/** A filter over stored processes; every given field must match. */
export interface StoredProcessFilter {
  owner?: string;
  state?: ProcessState;
  status?: ProcessStatus;
  ref?: string;
  /** Only processes run by this node (a store shared by a cluster; see {@link ClusterStore}). */
  node?: string;
  /** Only processes created by this stream (`metadata.streamId`). */
  streamId?: string;
  /** Only processes of this session. */
  session?: string;
  /** Only processes with a lower pid (keyset paging: the last pid of the page before). */
  beforePid?: number;
  /** At most this many processes (all when absent). */
  limit?: number;
}

/** A filter over stored events; every given field must match the event's route. */
export interface StoredEventFilter {
  owner?: string;
  pid?: number;
  ref?: string;
  /** Only events with `seq <= through` (a replay reads the log in bounded seq windows). */
  through?: number;
  /**
   * Stop after the event that brings the payload read (event bodies, output values and log texts as
   * stored) to this many bytes; at least one event is returned when any matches. A replay reads the
   * rest after the last event it got.
   */
  maxBytes?: number;
}

/** An event with its route, as stored for replay. */
export interface StoredEvent {
  event: ServerEvent;
  route: EventRoute;
}

/** What a {@link ClusterStore} hands to the node's process manager as it happens. */
export interface ClusterHandlers {
  /**
   * Events committed by any node, in commit order, each with its cluster-wide `seq` (its position in
   * the shared event log). Every event of the database reaches every node exactly once, in order.
   * `nodes[i]` is the node that committed `events[i]`.
   */
  events(events: StoredEvent[], nodes: string[]): void;
  /** Another node asks this node to kill process `pid` (this node runs it). */
  kill(pid: number): void;
  /**
   * This node took over these processes of nodes whose leases expired (`node`: the node that ran each):
   * the queued ones are to run here, the running ones were interrupted.
   */
  adopted(processes: Array<{ pid: number; node: string }>): void;
  /** Node `node` has more queued processes than free sandbox slots. */
  surplus(node: string): void;
  /** Node `node` offers `slots` free sandbox slots for this node's queued processes. */
  offer(node: string, slots: number): void;
  /** Another node handed these queued processes over to this node, to run here. */
  take(pids: number[]): void;
}

/**
 * A store shared by several servers (nodes) on one database (PostgreSQL with `cluster`): pids
 * unique across the cluster, an event log ordered by commit, processes owned by the node that runs
 * them, and messages between nodes. See docs/cluster.md.
 */
export interface ClusterStore {
  /** This node's name (its lease in the `nodes` table). */
  readonly node: string;
  /**
   * A new pid, unique across the cluster (reserved from the database in blocks, ahead of use).
   * @throws StoreError `STORE_UNAVAILABLE` when every reserved pid is used and no new block could be
   * reserved (the database is away).
   */
  nextPid(): number;
  /** Whether {@link ClusterStore.nextPid} has a pid to give at once. */
  pidAvailable(): boolean;
  /**
   * Resolves once a pid is reserved (at once unless a burst of creates used every reserved pid).
   * @throws StoreError `STORE_UNAVAILABLE` when the database cannot reserve one.
   */
  pidReady(): Promise<void>;
  /**
   * A new event id, unique across the cluster: the key of the event's row until it commits and gets
   * its `seq` (its position in the cluster's event log). Ids are reserved ahead of use.
   */
  nextEventId(): number;
  /**
   * Makes every event id taken from now on larger than every id any node was given so far (a run that
   * resumes here after outputs on another node keeps its outputs in order).
   * @throws StoreError `STORE_UNAVAILABLE` when the database cannot reserve ids.
   */
  renewEventIds(): Promise<void>;
  /** The node that runs process `pid` (the database's view; undefined when it is idle or unknown). */
  nodeOf(pid: number): Promise<string | undefined>;
  /** Processes waiting in the queues of the other nodes, as of this node's last lease renewal. */
  queuedElsewhere(): number;
  /** The other nodes holding a live lease, by name. */
  liveNodes(): Promise<string[]>;
  /** Asks `node` to kill process `pid` (delivered with `LISTEN/NOTIFY`). */
  sendKill(node: string, pid: number): void;
  /** Tells every node that this one has more queued processes than free slots. */
  announceSurplus(): void;
  /** Offers `slots` free sandbox slots to `node`. */
  sendOffer(node: string, slots: number): void;
  /**
   * Hands queued processes `pids` over to `node`: they become its processes once this node's writes
   * before them are committed, and it is told to run them.
   */
  handOver(node: string, pids: number[]): void;
  /**
   * Starts delivering events committed after now, kill requests and adopted processes to `handlers`.
   * @returns the seq of the last event committed before delivery starts.
   */
  attach(handlers: ClusterHandlers): Promise<{ lastSeq: number }>;
  /** Drops what this node caches of process `pid` (another node changed it). */
  forget(pid: number): void;
  /**
   * Claims idle process `pid`, read with `runs` runs, for its next run on this node: one statement
   * on the database, after this node's pending writes. False when another node queued it first (or
   * this node's lease was ended), so that of two nodes sent `run` at once only one runs it.
   */
  claimRun(pid: number, runs: number): Promise<boolean>;
  /** Runs and CPU time per principal and minute, counted in the database for every node. */
  readonly quotas: QuotaLedger;
  /** The processes queued or running on the other nodes (their owner and state), from the database. */
  loadElsewhere(): Promise<Array<{ pid: number; owner: string; state: ProcessState }>>;
}

/** Whether a store can take writes now, for `/healthz` and 503 answers. */
export type StoreHealth =
  | { ok: true }
  | {
      ok: false;
      /** `STORE_UNAVAILABLE`: the database cannot be reached or written (disk full, read-only, gone). */
      code: 'STORE_UNAVAILABLE';
      message: string;
    };

/**
 * Where the process manager keeps process records, runs, outputs, logs and the event log.
 *
 * Writes are synchronous calls that queue the change (the manager owns the live state; a durable store
 * commits them in batches, in call order); {@link ProcessStore.committed} resolves once they are
 * durable, and callers acknowledge a create or a signal only then. Reads are asynchronous and see
 * every earlier write. The in-memory store is {@link createMemoryStore}; the SQL store
 * (`openSqlStore`, SQLite or PostgreSQL) implements the same interface.
 */
export interface ProcessStore {
  /** The highest pid and event seq ever stored (0 if none), known since the store was opened. */
  counters(): { lastPid: number; lastSeq: number };
  /** Inserts or replaces a process record. */
  putProcess(record: StoredProcess): void;
  /** Updates the state, status and run count of a stored process. */
  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void;
  getProcess(pid: number): Promise<StoredProcess | undefined>;
  /** Matching processes, newest (highest pid) first, at most `filter.limit`. */
  listProcesses(filter: StoredProcessFilter): Promise<StoredProcess[]>;
  /** Deletes a process with its runs and events. */
  deleteProcess(pid: number): void;
  /** Starts run `run` of a process (outputs and logs empty). */
  insertRun(pid: number, run: number, init: RunUpdate): void;
  updateRun(pid: number, run: number, update: RunUpdate): void;
  /** Appends one output value (in `seq` order) to a run. */
  appendOutput(pid: number, run: number, seq: number, value: unknown): void;
  /** Appends console text to a run's stdout or stderr. */
  appendLog(pid: number, run: number, seq: number, stream: 'stdout' | 'stderr', text: string): void;
  getRun(pid: number, run: number): Promise<StoredRun | undefined>;
  /**
   * The runs of process `pid` numbered below `beforeRun`, highest first, at most `limit`, without
   * their outputs and logs, once what was written before is committed.
   */
  listRuns(
    pid: number,
    beforeRun: number,
    limit: number,
  ): Promise<Array<Omit<StoredRun, 'outputs' | 'stdout' | 'stderr'>>>;
  /**
   * Stores a file run `run` made with `output.file()`; a second file of that name in the run (a
   * resumed run making it again) leaves the first.
   */
  putFile(pid: number, run: number, file: RunFile): void;
  /** File `name` of run `run` of process `pid`, once what was written before is committed. */
  getFile(pid: number, run: number, name: string): Promise<RunFile | undefined>;
  /** Inserts or replaces the record of the call at `call.position` of run `run` of process `pid`. */
  putCall(pid: number, run: number, call: StoredCall): void;
  /**
   * The calls of run `run` of process `pid` with a position after `after` (all: -1), by position, at
   * most `limit` (all when absent), once what was written before is committed.
   */
  listCalls(pid: number, run: number, after: number, limit?: number): Promise<StoredCall[]>;
  /** Appends an event to the log (events arrive with strictly increasing `seq`). */
  appendEvent(event: ServerEvent, route: EventRoute): void;
  /** Stored events with `seq > since` matching `filter`, in `seq` order. */
  eventsSince(since: number, filter: StoredEventFilter): Promise<StoredEvent[]>;
  /**
   * Resolves once every write queued so far is committed (durable). Writes are grouped: every caller
   * waiting in one event-loop turn shares one commit.
   * @throws StoreError `STORE_UNAVAILABLE` when the store cannot commit within its bounded wait (the
   * writes stay queued and are retried; nothing is dropped).
   */
  committed(): Promise<void>;
  /** Whether writes are being committed now (see {@link StoreHealth}). */
  health(): StoreHealth;
  /** Commits pending writes and releases resources. */
  close(): Promise<void>;
  /** Present when the store is shared by several nodes. */
  readonly cluster?: ClusterStore;
}
