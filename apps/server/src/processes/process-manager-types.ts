import type { Checker } from '@mci/check';
import type { IntentStream } from '@mci/intent-extractor';
import type {
  Approval,
  CallPage,
  CheckMode,
  DistributiveOmit,
  Page,
  PageRequest,
  ProcessMetadata,
  ProcessResult,
  ProcessSnapshot,
  ProcessState,
  ProcessStatus,
  RunSnapshot,
  RunSummary,
  ServerEvent,
} from '@mci/protocol';
import type { RunFile, SandboxEvent, SandboxPool, StateHost, ToolHost } from '@mci/sandbox';
import type { Redactor } from '@mci/schema';
import type { Logger } from 'pino';
import type { Approvals } from '../approvals/approvals.ts';
import type { EventRoute, ProcessStore, StoredProcess } from './process-store.ts';
import type { QuotaOptions } from './quota-policy.ts';
import type { RunSkillSet } from './run-controller.ts';
import type { IntentStreamLimits } from './stream-session.ts';

/** The part of a `SandboxPool` the process manager uses (a test may pass a pool of its own). */
export type ExecutionPool = Pick<SandboxPool, 'execute' | 'size'>;

/** A `SandboxEvent` without the sandbox's `seq` (the manager numbers a process's events itself). */
export type SandboxEventBody = DistributiveOmit<SandboxEvent, 'seq'>;

/** Who is calling: a principal id (the token's name) and its role. Operators see and signal everything. */
export interface Principal {
  id: string;
  role: 'client' | 'operator';
}

/** Limits of one process. */
export interface ProcessLimits {
  /** Wall-clock timeout of a run in milliseconds. */
  timeoutMs?: number;
  /** Memory limit of the sandbox isolate in MiB. */
  memoryLimitMb?: number;
}

/** Options of {@link createProcessManager}. */
export interface ProcessManagerOptions {
  /**
   * The sandbox pool that runs programs: a `SandboxPool` from `@mci/sandbox`'s `createSandboxPool`,
   * or a test's pool with the same `execute`. The manager does not close it.
   */
  pool: ExecutionPool;
  /** The tools every execution can call (a `ToolRunner` from `@mci/tools` fits). @default no tools */
  tools?: ToolHost;
  /**
   * Policies and approvals over the tools (docs/approvals.md): calls are checked, `ask` suspends the
   * process until a person decides. @default every call acts at once
   */
  approvals?: Approvals;
  /**
   * The server's secret values: replaced by `[redacted:NAME]` in outputs, logs and errors before they
   * are stored or sent (docs/security.md). @default nothing is redacted
   */
  redactor?: Redactor;
  /** Checks each program before it runs (`createChecker` of `@mci/check`); absent: no check. */
  checker?: Pick<Checker, 'check'>;
  /**
   * The saved skills a run starts with (docs/sessions.md, "Skills"): read at the start of each run.
   * @default runs have no `skills`
   */
  skillsFor?: (record: StoredProcess) => Promise<RunSkillSet>;
  /**
   * The check mode of processes that give none: `block` (a program the check finds certainly wrong
   * ends `failed` with `CHECK_FAILED` without running), `warn` or `off`. @default 'block'
   */
  check?: CheckMode;
  /**
   * Sessions and the `state` of runs (docs/sessions.md). @default no sessions: a process naming one
   * is refused (`VALIDATION`), and `state` calls reject
   */
  sessions?: ProcessSessions;
  /** Where records, runs and events live. @default an in-memory store ({@link createMemoryStore}) */
  store?: ProcessStore;
  /** Most processes waiting in the queue; past it, creation fails with `QUEUE_FULL`. @default 1000 */
  maxQueue?: number;
  /**
   * Most processes of one principal waiting in the queue (on this node), so that one principal cannot
   * fill it for the others; past it, its creation fails with `QUOTA_EXCEEDED`. The default of
   * `quotas.default.maxQueued`. @default `maxQueue` (no share: `createServer` gives half of `maxQueue`
   * when it has tokens)
   */
  maxQueuedPerPrincipal?: number;
  /**
   * Most running processes of one principal (on this node), so that long runs of one cannot hold
   * every slot while others wait. The default of `quotas.default.maxRunning`. @default `concurrency`
   * (`createServer` gives half of it, rounded up, when it has tokens)
   */
  maxRunningPerPrincipal?: number;
  /**
   * Quotas per principal (by principal id): runs at once, processes queued, runs and sandbox CPU ms
   * per minute; past one a create or `run` fails with `QUOTA_EXCEEDED` and creates nothing.
   * `maxRunningPerPrincipal` and `maxQueuedPerPrincipal` are the defaults of `quotas.default`.
   * @default no per-minute quotas
   * @see docs/operations.md, "Quotas"
   */
  quotas?: QuotaOptions;
  /** Largest accepted program, in UTF-8 bytes; past it, `CODE_TOO_LARGE`. @default 102400 (100 KB) */
  maxCodeBytes?: number;
  /** Limits of a process that gives none. @default { timeoutMs: 30000, memoryLimitMb: 128 } */
  defaults?: ProcessLimits;
  /**
   * Largest limits a process may ask for (larger ones are clamped; `timeoutMs: null` means this one).
   * @default { timeoutMs: 300000, memoryLimitMb: 1024 }
   */
  maxima?: ProcessLimits;
  /** Size cap of the response pipe text of `stream.result`, in UTF-8 bytes. @default 16384 */
  responsePipeBytes?: number;
  /** Logs one line per process transition (with `pid`). @default no logging */
  logger?: Logger;
  /** Runs at most this many processes at once. @default pool.size */
  concurrency?: number;
  /**
   * The incremental intent extractor of streams, given the stream's buffering limits.
   * @default `createIntentStream` of `@mci/intent-extractor`
   */
  createIntentStream?: (limits: IntentStreamLimits) => IntentStream;
  /** Most open (not ended) streams per principal; past it `stream.start` fails with `LIMIT_EXCEEDED`. @default 64 */
  maxOpenStreams?: number;
  /**
   * A principal at `maxOpenStreams` gets room by ending its streams that had no chunk for this long
   * (ms), so a client that vanished mid-turn does not hold its quota. @default 600000 (10 minutes)
   */
  streamIdleMs?: number;
  /**
   * Bytes of outputs (their JSON) and logs (UTF-8) one run may have stored and sent per second, with
   * bursts of twice that; past it outputs are dropped and log texts cut, the run is `truncated` and
   * its stderr ends with a note. @default 1048576 (1 MiB)
   */
  outputBytesPerSecond?: number;
  /**
   * Bytes of JSON of a call's input and of its result that the audit keeps (docs/operations.md,
   * "Audit"): a larger input is cut, a larger result summarized without its value. @default 4096
   */
  auditValueBytes?: number;
}

/** What the manager needs of sessions (the server's `SessionStore` behind them). */
export interface ProcessSessions {
  /**
   * Creates session `id` of `owner`, or checks that an existing one is `owner`'s; `true` makes a new
   * one. Resolves with its id.
   * @throws ServerError `VALIDATION` for a bad id, `CONFLICT` for another principal's.
   */
  open(id: string | true, owner: string): Promise<string>;
  /** The `state` a run of `record` reads and writes: its session's, or its own without one. */
  stateFor(record: StoredProcess): StateHost;
}

/** Which page of a run's calls {@link ProcessManager.listCalls} reads. */
export interface CallPageRequest {
  /** The `nextCursor` of the page before; absent: the first page. */
  cursor?: string;
  /** Calls per page, 1 to 100. @default 50 */
  limit?: number;
}

/** What {@link ProcessManager.create} takes (already shape-checked by the transport). */
export interface CreateProcessInput {
  code: string;
  /** `ts` | `typescript` | `js` | `javascript`. @default 'ts' */
  lang?: string;
  /** Client label grouping processes; trimmed, 1..256 chars. */
  ref?: string;
  /** Run timeout in ms (positive integer), or `null` for the server maximum. @default defaults.timeoutMs */
  timeoutMs?: number | null;
  /** Isolate memory limit in MiB. @default defaults.memoryLimitMb */
  memoryLimitMb?: number;
  /** Queue the process at once. `false`: it waits idle with status null until a run signal. @default true */
  autorun?: boolean;
  /** The check before each run. @default the manager's `check` */
  check?: CheckMode;
  metadata?: ProcessMetadata;
  /**
   * The session (docs/sessions.md): an id (created when new), or `true` for a new one. A stream's
   * processes get the stream's, opened already. @default none
   */
  session?: string | true;
}

/** A filter of {@link ProcessManager.list}; every given field must match. */
export interface ProcessFilter {
  state?: ProcessState;
  status?: ProcessStatus;
  ref?: string;
  /** Only the processes of this session. */
  session?: string;
}

/** What {@link ProcessManager.replay} returns events of: one process, one ref, or all visible ones. */
export interface ReplayFilter {
  pid?: number;
  ref?: string;
  all?: boolean;
  /** Only events with `seq <= through` (replays read the log in bounded windows). */
  through?: number;
  /** Stop at about this many bytes of stored payload (see `StoredEventFilter.maxBytes`). */
  maxBytes?: number;
}

/** A listener of {@link ProcessManager.onEvent}. */
export type EventListener = (event: ServerEvent, route: EventRoute) => void;

/** The end of a stream: every process it created (in intent order) and the response pipe text. */
export interface StreamResult {
  streamId: string;
  ref?: string;
  processes: ProcessSnapshot[];
  text: string;
}

/**
 * An open stream (one model turn): push chunks of model output as they arrive, then end it. Closed
 * exec intents in ts/js become processes at once; `result` resolves when the stream has ended and
 * all its processes are idle, and their results are read from the store (the same moment the
 * `stream.result` event is sent); it rejects when the store cannot be read.
 */
export interface StreamHandle {
  readonly streamId: string;
  readonly ref: string | undefined;
  /** Feeds model output. Throws `CONFLICT` after {@link StreamHandle.end}. */
  push(text: string): void;
  /** Ends the stream (flushes the extractor; unclosed intents are rejected). Idempotent. */
  end(): void;
  readonly ended: boolean;
  /**
   * Stops waiting for processes not run yet (a stream opened with `autorun: false`): they stay idle
   * and unrun, and the result follows once the stream has ended and the running ones are idle.
   */
  stopWaiting(): void;
  readonly result: Promise<StreamResult>;
}

/** A Prometheus-style histogram: cumulative `counts[i]` of values `<= buckets[i]`, plus sum and count. */
export interface Histogram {
  buckets: number[];
  counts: number[];
  sum: number;
  count: number;
}

/** Counters for `/metrics`. `byStatus` keys: `success`, `failed`, `timeout`, `canceled`, `none` (null). */
export interface ProcessStats {
  byState: Record<ProcessState, number>;
  byStatus: Record<'success' | 'failed' | 'timeout' | 'canceled' | 'none', number>;
  queueLength: number;
  running: number;
  /** Processes that may run at once (the sandbox slots: the pool's size unless configured). */
  concurrency: number;
  processesCreated: number;
  runsStarted: number;
  toolCalls: number;
  toolErrors: number;
  /** Durations of finished runs in milliseconds. */
  runDurationsMs: Histogram;
  /** Use of the quotas: the principals named in `quotas.principals`, then `other` for the rest. */
  quotas: PrincipalUse[];
}

/** What one principal (or every principal not named in the quotas: `other`) uses now on this node. */
export interface PrincipalUse {
  principal: string;
  /** Its processes running (or terminating) and waiting in the queue. */
  running: number;
  queued: number;
  /** Runs started and sandbox CPU time (ms) of runs ended in the current one-minute window. */
  runs: number;
  cpuMs: number;
  /** Creates and `run` signals refused with `QUOTA_EXCEEDED` since the server started. */
  refused: number;
}

/**
 * The process model of the server: creation, runs, signals, the fair queue, streams, the event log.
 * Methods throw (or reject with) {@link ServerError} (`VALIDATION`, `NOT_FOUND`, `CONFLICT`,
 * `QUEUE_FULL`, `CODE_TOO_LARGE`, `SHUTTING_DOWN`). Clients only see their own processes: another
 * principal's pid is `NOT_FOUND` for them; operators see all.
 *
 * Reads go to the store and resolve asynchronously. A create, a signal or a delete takes effect at
 * once and resolves once the store has committed it (`store.committed()`), so an answer is only given
 * for a durable change; when the store cannot commit, the call rejects with `StoreError`
 * `STORE_UNAVAILABLE` (the change stays queued in the store).
 */
export interface ProcessManager {
  /** Creates a process (queued, or idle with `autorun: false`); resolves with its snapshot as created. */
  create(input: CreateProcessInput, principal: Principal): Promise<ProcessSnapshot>;
  /**
   * `run`: only for an idle process (else `CONFLICT`); queues a new run. `kill`: queued or suspended ->
   * idle/canceled at once (a suspended one's approval `canceled`); running -> terminating ->
   * idle/canceled; terminating -> no change; idle -> `CONFLICT`.
   * Run signals and deletes of one process are handled one after another: of two run signals sent at
   * once, one queues a run and the other gets `CONFLICT`. Resolves with the snapshot right after the
   * signal. `force` is accepted for MCI process API compatibility and has no effect.
   */
  signal(
    pid: number,
    signal: 'kill' | 'run',
    principal: Principal,
    options?: { force?: boolean },
  ): Promise<ProcessSnapshot>;
  get(pid: number, principal: Principal): Promise<ProcessSnapshot>;
  /** One run in full (`NOT_FOUND` for a run that does not exist). */
  getRun(pid: number, run: number, principal: Principal): Promise<RunSnapshot>;
  /**
   * A page of the runs of process `pid`, newest first, without their outputs and logs: at most
   * `limit` (1 to 100, default 50) after `cursor`, the `nextCursor` of the page before.
   * @throws ServerError `NOT_FOUND` (process not visible), `VALIDATION` (a cursor this server did not
   * give, a limit out of range).
   */
  listRuns(pid: number, page: PageRequest, principal: Principal): Promise<Page<RunSummary>>;
  /**
   * File `name` that run `run` made with `output.file()`.
   * @throws ServerError `NOT_FOUND` (process not visible, no such run or file), `VALIDATION` (a name
   * no file can have, for a visible process).
   */
  getFile(pid: number, run: number, name: string, principal: Principal): Promise<RunFile>;
  /**
   * A page of the calls of run `run` (its tool calls and fetches, by position; docs/operations.md,
   * "Audit"): at most `limit` (1 to 100) after `cursor`, the `nextCursor` of the page before.
   * @throws ServerError `NOT_FOUND` (process not visible, no such run), `VALIDATION` (a cursor this
   * server did not give, a limit out of range).
   */
  listCalls(pid: number, run: number, page: CallPageRequest, principal: Principal): Promise<CallPage>;
  /** The snapshot with the latest run's outputs, stdout and stderr (empty if it never ran). */
  getResult(pid: number, principal: Principal): Promise<ProcessResult>;
  getCode(pid: number, principal: Principal): Promise<string>;
  /**
   * A page of the visible processes matching `filter`, newest (highest pid) first: at most `limit`
   * (1 to 100, default 50) after `cursor`, the `nextCursor` of the page before. Pids only grow, so a
   * process created while a client pages lands before its first page, never in a later one.
   * @throws ServerError `VALIDATION` (a bad `ref`, a cursor this server did not give, a limit out of range).
   */
  list(filter: ProcessFilter & PageRequest, principal: Principal): Promise<Page<ProcessSnapshot>>;
  /** Deletes an idle process with its runs and events (`CONFLICT` otherwise). */
  delete(pid: number, principal: Principal): Promise<void>;
  /**
   * Queues the suspended run of process `pid` again once its approval is decided (the run replays its
   * call log; docs/approvals.md). Does nothing for a process that is not suspended.
   */
  resume(pid: number): Promise<void>;
  /** Sends the `approval` event of `approval` to those who see its process. */
  announce(approval: Approval): Promise<void>;
  /** Resolves with the snapshot once the process is idle (at once if it already is; a suspended one waits). */
  wait(pid: number, principal: Principal): Promise<ProcessSnapshot>;
  /**
   * Opens a stream (`CONFLICT` if the id is in use; `VALIDATION` for a bad ref). `autorun: false` creates its processes idle, each waiting for a `run` signal;
   * its result then follows once every one has run and ended (see {@link StreamHandle.stopWaiting}).
   */
  openStream(
    input: { streamId: string; ref?: string; autorun?: boolean; session?: string },
    principal: Principal,
  ): StreamHandle;
  /**
   * Opens session `session` of `principal` (created when new; `true`: a new one) for a stream or a
   * conversation, whose processes then name it. Resolves with its id.
   * @throws ServerError `VALIDATION` (a bad id, or no sessions), `CONFLICT` (another principal's).
   */
  openSession(session: string | true, principal: Principal): Promise<string>;
  /** An open or finished stream of this principal (`NOT_FOUND` otherwise). */
  getStream(streamId: string, principal: Principal): StreamHandle;
  /**
   * Checks that `principal` may follow stream `streamId`: one open here, or one whose processes are
   * stored (an ended stream, or a stream of another node of a cluster).
   * @throws ServerError `NOT_FOUND`.
   */
  checkStream(streamId: string, principal: Principal): Promise<void>;
  /** Every event goes to every listener with its route; returns the unsubscribe function. */
  onEvent(listener: EventListener): () => void;
  /** Stored events with `seq > since` visible to `principal` and matching `filter`, in order. */
  replay(since: number, filter: ReplayFilter, principal: Principal): Promise<ServerEvent[]>;
  /** The latest event seq (0 if none yet). */
  lastSeq(): number;
  /**
   * Resolves once the changes made so far are committed by the store (`store.committed()`): durable,
   * and read by every node of a cluster. Creates, signals and deletes wait for it themselves.
   * @throws StoreError `STORE_UNAVAILABLE` when the store cannot commit in its bounded wait.
   */
  committed(): Promise<void>;
  stats(): ProcessStats;
  /**
   * Refuses new work (`SHUTTING_DOWN`), cancels queued processes, lets running ones finish for
   * `graceMs`, kills the rest, waits for them to be idle, and closes the store.
   */
  shutdown(options?: { graceMs?: number }): Promise<void>;
}
