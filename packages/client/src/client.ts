import type {
  Approval,
  ApprovalPage,
  CallPage,
  HelloMessage,
  Page,
  PageRequest,
  ProcessCreateRequest,
  ProcessListRequest,
  ProcessResult,
  ProcessSnapshot,
  RunSnapshot,
  RunSummary,
  ServerEvent,
  Skill,
  SkillSaveRequest,
  SubscriptionTarget,
} from '@mci/protocol';
import { type ReconnectOptions, reconnectPolicy } from './backoff.ts';
import { ChatApi } from './chat-api.ts';
import { ChatStream, type OpenStreamOptions } from './chat-stream.ts';
import { ClientError } from './client-error.ts';
import { Connection, type ConnectionState } from './connection.ts';
import { Feed, type SubscribeOptions, type Subscription } from './feed.ts';
import { FeedRegistry } from './feed-registry.ts';
import type { ApprovalListOptions, CallListOptions } from './http-api.ts';
import { HttpApi } from './http-api.ts';
import { isFinished, runToWaitFor, toSnapshot } from './process-events.ts';
import { resolveServerUrls } from './server-url.ts';
import { SessionsApi } from './sessions-api.ts';
import { defaultSocketFactory, type SocketFactory } from './socket.ts';

/** Options of {@link connect}. */
export interface ConnectOptions {
  /** A client or operator token: sent as `Authorization: Bearer` in Node, as `?token=` in browsers. */
  token?: string;
  /** Reconnect after a dropped connection (with backoff), resubscribing from the last seq seen. @default true */
  reconnect?: boolean | ReconnectOptions;
  /** How long a request may wait for its reply, queueing included, in ms. @default 30000 */
  requestTimeoutMs?: number;
  /** How long opening a connection may take (up to the server's `hello`), in ms. @default 10000 */
  connectTimeoutMs?: number;
  /** Most requests waiting for the connection to come back; more fail with `BACKLOG_FULL`. @default 1000 */
  maxBacklog?: number;
  /** Opens the WebSocket. @default `ws` in Node, the global `WebSocket` elsewhere */
  socketFactory?: SocketFactory;
}

/** Options of {@link MciClient.createProcess}: everything of `process.create` but the code. */
export type CreateProcessOptions = Omit<ProcessCreateRequest, 'type' | 'id' | 'code'>;
/** Filter of {@link MciClient.list} and {@link MciClient.processes}: `state`, `status`, `ref`. */
export type ProcessFilter = Omit<ProcessListRequest, 'type' | 'id' | 'limit' | 'cursor'>;
/**
 * What {@link MciClient.listProcesses} reads: the filter and the page (`limit` 1-100, default 50;
 * `cursor`, the `nextCursor` of the page before).
 */
export type ProcessListOptions = Omit<ProcessListRequest, 'type' | 'id'>;
/** Options of {@link MciClient.wait}. */
export interface WaitOptions {
  /** Give up after this many ms (`TIMEOUT`). @default no limit */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Connects to an MCI server and resolves once it said hello. `url` may be `ws://host:port/ws`,
 * `ws://host:port`, `http://host:port` or `host:port`.
 * @throws ClientError `CONNECT_FAILED` (unreachable, no hello in time, bad URL) or `UNAUTHORIZED`.
 * @see docs/client.md
 */
export async function connect(url: string, options: ConnectOptions = {}): Promise<MciClient> {
  const client = new MciClient(url, options);
  await client.opened;
  return client;
}

/**
 * A connection to an MCI server (see {@link connect}): processes, signals, subscriptions with
 * exactly-once events across reconnects, and streams of model output.
 */
export class MciClient {
  /** The WebSocket endpoint (`ws://host:port/ws`). */
  readonly url: string;
  /** The HTTP API base (`http://host:port`). */
  readonly httpUrl: string;
  /** @internal Resolves on the first hello. */
  readonly opened: Promise<HelloMessage>;
  /** Server-hosted conversations (`chat.*`): start, cancel, list, get, rename, delete, and their events. */
  readonly chat: ChatApi;
  /** Sessions and their durable state (`session.*`, `state.*`): list, get, delete, getState, setState, deleteState. */
  readonly sessions: SessionsApi;
  readonly #connection: Connection;
  readonly #http: HttpApi;
  readonly #feeds: FeedRegistry;
  readonly #stateListeners = new Set<(state: ConnectionState, error?: ClientError) => void>();
  readonly #errorListeners = new Set<(error: ClientError) => void>();

  /** @internal Use {@link connect}. */
  constructor(url: string, options: ConnectOptions) {
    const urls = resolveServerUrls(url);
    this.url = urls.ws;
    this.httpUrl = urls.http;
    const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#http = new HttpApi(urls.http, options.token, requestTimeoutMs);
    this.#connection = new Connection(
      {
        url: urls.ws,
        token: options.token,
        reconnect: reconnectPolicy(options.reconnect),
        requestTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
        maxBacklog: options.maxBacklog ?? 1000,
        socketFactory: options.socketFactory ?? defaultSocketFactory,
      },
      {
        onOpen: (_hello, reconnected) => {
          if (reconnected) this.#feeds.resubscribeAll();
        },
        onEvent: (event) => this.#feeds.route(event),
        onOverflow: () => this.#feeds.resubscribeAll(),
        onChatEvent: (event) => this.chat.deliver(event),
        onState: (state, error) => this.#stateChanged(state, error),
        onError: (error) => {
          for (const listener of this.#errorListeners) listener(error);
        },
      },
    );
    this.#feeds = new FeedRegistry(this.#connection);
    this.chat = new ChatApi(this.#connection);
    this.sessions = new SessionsApi(this.#connection);
    this.opened = this.#connection.start();
  }

  /** Who the server takes this client for (`role` `client` or `operator`), from its hello. */
  get principal(): HelloMessage['principal'] {
    return (this.#connection.hello as HelloMessage).principal;
  }

  /** The server's limits for this connection (`maxFrameBytes`, `maxCodeBytes`), from its hello. */
  get limits(): HelloMessage['limits'] {
    return (this.#connection.hello as HelloMessage).limits;
  }

  /** `open`, `reconnecting` (requests wait, bounded), or `closed`. */
  get state(): ConnectionState {
    return this.#connection.state;
  }

  /** The highest event seq this client has seen. */
  get seq(): number {
    return this.#connection.knownSeq;
  }

  /** Calls `listener` at every connection state change; returns a function that stops it. */
  onStateChange(listener: (state: ConnectionState, error?: ClientError) => void): () => void {
    this.#stateListeners.add(listener);
    return () => this.#stateListeners.delete(listener);
  }

  /** Calls `listener` with errors no request is waiting for (a message that breaks the protocol). */
  onError(listener: (error: ClientError) => void): () => void {
    this.#errorListeners.add(listener);
    return () => this.#errorListeners.delete(listener);
  }

  /**
   * Creates a process running `code` (queued at once unless `autorun: false`).
   * @throws ClientError `VALIDATION` (with `path`), `CODE_TOO_LARGE`, `QUEUE_FULL`, `SHUTTING_DOWN`, ...
   */
  async createProcess(code: string, options: CreateProcessOptions = {}): Promise<ProcessSnapshot> {
    return (await this.#connection.request({ type: 'process.create', code, ...options })).process;
  }

  /**
   * Sends `kill` or `run` (a new run of an idle process) and resolves with the snapshot right after.
   * @throws ClientError `CONFLICT` (the state does not allow it), `NOT_FOUND`
   */
  async signal(
    pid: number,
    signal: 'kill' | 'run',
    options: { force?: boolean } = {},
  ): Promise<ProcessSnapshot> {
    const message = {
      type: 'process.signal' as const,
      pid,
      signal,
      ...(options.force !== undefined && { force: options.force }),
    };
    return (await this.#connection.request(message)).process;
  }

  /** The snapshot of one process. @throws ClientError `NOT_FOUND` */
  async get(pid: number): Promise<ProcessSnapshot> {
    return (await this.#connection.request({ type: 'process.get', pid })).process;
  }

  /**
   * One page of the visible processes, newest first, optionally filtered by `state`, `status`,
   * `ref`: pass the page's `nextCursor` as `cursor` for the next one (absent on the last page).
   * @throws ClientError `VALIDATION` (a cursor the server did not give, a limit out of 1 to 100).
   */
  async listProcesses(options: ProcessListOptions = {}): Promise<Page<ProcessSnapshot>> {
    const { items, nextCursor } = await this.#connection.request({ type: 'process.list', ...options });
    return nextCursor === undefined ? { items } : { items, nextCursor };
  }

  /**
   * Every visible process matching `filter`, newest first, read a page (`pageSize`, default 100) at
   * a time as the loop asks for more. Processes created meanwhile are not included; none is
   * repeated or skipped.
   */
  async *processes(filter: ProcessFilter = {}, pageSize = 100): AsyncGenerator<ProcessSnapshot> {
    let cursor: string | undefined;
    do {
      const page = await this.listProcesses({
        ...filter,
        limit: pageSize,
        ...(cursor !== undefined && { cursor }),
      });
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** Every visible process matching `filter`, newest first (all pages of {@link processes}). */
  async list(filter: ProcessFilter = {}): Promise<ProcessSnapshot[]> {
    const all: ProcessSnapshot[] = [];
    for await (const process of this.processes(filter)) all.push(process);
    return all;
  }

  /**
   * A page of the runs of process `pid`, newest first, without their outputs and logs (`limit` 1-100,
   * default 50; `cursor`, the `nextCursor` of the page before), over HTTP.
   * @throws ClientError `NOT_FOUND`, `VALIDATION`
   */
  listRuns(pid: number, options: PageRequest = {}): Promise<Page<RunSummary>> {
    return this.#http.runs(pid, options);
  }

  /** One run in full (outputs, stdout, stderr, error), over HTTP. `run` @default the latest */
  async getRun(pid: number, run?: number): Promise<RunSnapshot> {
    return this.#http.run(pid, run ?? (await this.get(pid)).run);
  }

  /**
   * A page of the tool calls and fetches of run `run` (the audit: input, result, duration, decision,
   * who decided), by position, over HTTP. @throws ClientError `NOT_FOUND`, `VALIDATION`
   */
  listCalls(pid: number, run: number, options: CallListOptions = {}): Promise<CallPage> {
    return this.#http.calls(pid, run, options);
  }

  /** A process's snapshot with its latest run's outputs and logs: what `formatResults` renders. */
  async getResult(pid: number): Promise<ProcessResult> {
    const snapshot = await this.get(pid);
    if (snapshot.run === 0) return { ...snapshot, outputs: [], stdout: '', stderr: '' };
    const { outputs, stdout, stderr, truncated } = await this.#http.run(pid, snapshot.run);
    return { ...snapshot, outputs, stdout, stderr, ...(truncated !== undefined && { truncated }) };
  }

  /** The code a process runs, over HTTP. */
  getCode(pid: number): Promise<string> {
    return this.#http.code(pid);
  }

  /**
   * Saves a skill over HTTP (docs/sessions.md, "Skills"): a new version when the name exists.
   * @throws ClientError `CHECK_FAILED` when its code does not compile (the first finding in the
   *   message), `VALIDATION` (a bad name, with `path`).
   */
  saveSkill(skill: SkillSaveRequest): Promise<Skill> {
    return this.#http.saveSkill(skill);
  }

  /** A page of the caller's skills (latest versions), newest first, over HTTP. */
  listSkills(page: PageRequest = {}): Promise<Page<Skill>> {
    return this.#http.skills(page);
  }

  /** A skill's latest version, or version `version`, over HTTP. @throws ClientError `NOT_FOUND`. */
  getSkill(name: string, version?: number): Promise<Skill> {
    return this.#http.skill(name, version);
  }

  /** Deletes a skill with every version, over HTTP. @throws ClientError `NOT_FOUND`. */
  deleteSkill(name: string): Promise<void> {
    return this.#http.deleteSkill(name);
  }

  /**
   * Approvals this client may see (an operator's: all), newest first, a page (`limit` 1-100, default
   * 50) at a time, over HTTP (docs/approvals.md).
   */
  listApprovals(options: ApprovalListOptions = {}): Promise<ApprovalPage> {
    return this.#http.approvals(options);
  }

  /** One approval. @throws ClientError `NOT_FOUND` */
  getApproval(id: string): Promise<Approval> {
    return this.#http.approval(id);
  }

  /**
   * Approves pending approval `id`: its process resumes and the call acts.
   * @throws ClientError `NOT_PENDING` when it was decided already (or expired, or its process was killed).
   */
  approve(id: string, options: { reason?: string } = {}): Promise<Approval> {
    return this.#decide(id, 'approve', options.reason);
  }

  /**
   * Denies pending approval `id`: its process resumes and the call rejects with `APPROVAL_DENIED`.
   * @throws ClientError `NOT_PENDING` when it was decided already.
   */
  deny(id: string, options: { reason?: string } = {}): Promise<Approval> {
    return this.#decide(id, 'deny', options.reason);
  }

  /** `approval.decide` over the WebSocket. */
  async #decide(approvalId: string, decision: 'approve' | 'deny', reason: string | undefined) {
    const message = {
      type: 'approval.decide' as const,
      approvalId,
      decision,
      ...(reason !== undefined && { reason }),
    };
    return (await this.#connection.request(message)).approval;
  }

  /**
   * Follows the events of a process (a pid), a ref, a stream or everything (`{ all: true }`), each
   * once and in order, across reconnects. With `since`, stored events after it are replayed first.
   */
  subscribe(target: number | SubscriptionTarget, options: SubscribeOptions = {}): Subscription {
    const resolved = typeof target === 'number' ? { pid: target } : target;
    const feed = new Feed(this.#feeds, resolved, options, options.since);
    this.#feeds.add(feed);
    return feed;
  }

  /**
   * The events of process `pid` (`process`, `output`, `log`, `tool`), from `since` (@default 0: its
   * whole stored history), ending after the run that is current when you call it (or the first run,
   * for a process not run yet) has finished. `for await (const event of client.events(pid))`.
   */
  async *events(pid: number, options: { since?: number } = {}): AsyncGenerator<ServerEvent, void, undefined> {
    const feed = this.subscribe({ pid }, { since: options.since ?? 0 });
    // Sent after the subscribe: its snapshot is at least as new as anything the replay holds.
    const current = this.get(pid);
    current.catch(() => {});
    let until: number | undefined;
    try {
      for await (const event of feed) {
        yield event;
        if (event.type === 'process' && isFinished(event)) {
          until ??= runToWaitFor(await current);
          if (event.run >= until) return;
        }
      }
    } finally {
      feed.close();
    }
  }

  /**
   * Resolves with the final snapshot of process `pid` once its current run has finished (at once when
   * it already has; for a process not run yet, once its first run has).
   * @throws ClientError `NOT_FOUND`, `TIMEOUT` (`timeoutMs`), `DISCONNECTED`, `CLOSED`; the signal's reason when aborted.
   */
  async wait(pid: number, options: WaitOptions = {}): Promise<ProcessSnapshot> {
    options.signal?.throwIfAborted();
    const feed = new Feed(this.#feeds, { pid }, {}, undefined);
    this.#feeds.add(feed);
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            feed.close();
          }, options.timeoutMs);
    const abort = () => feed.close();
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      const snapshot = await this.get(pid);
      if (isFinished(snapshot)) return snapshot;
      const until = runToWaitFor(snapshot);
      for await (const event of feed) {
        if (event.type === 'process' && isFinished(event) && event.run >= until) return toSnapshot(event);
      }
      options.signal?.throwIfAborted();
      if (timedOut)
        throw new ClientError('TIMEOUT', `process ${pid} did not finish within ${options.timeoutMs} ms`);
      throw new ClientError('CLOSED', `stopped waiting for process ${pid}: the client was closed`);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
      feed.close();
    }
  }

  /**
   * Opens a stream (one model turn): `write` the model's output as it arrives, `end` it, await
   * `result` (the response pipe in `result.text`); iterate it for live events.
   */
  openStream(options: OpenStreamOptions = {}): ChatStream {
    const streamId = options.streamId ?? crypto.randomUUID();
    const stream = new ChatStream(streamId, options.ref, this.#connection, options.onEvent);
    const feed = new Feed(
      this.#feeds,
      { streamId },
      {
        onEvent: (event) => stream.deliver(event, options.onEvent),
        until: (event) => event.type === 'stream.result',
        onEnd: (error) => stream.ended(error),
      },
      this.#connection.knownSeq,
    );
    // stream.start subscribes the connection; until it is answered there is nothing to resubscribe to.
    feed.awaitingStart = true;
    feed.confirmedImplicitly();
    this.#feeds.add(feed);
    const started = this.#connection.request(
      { type: 'stream.start', streamId, ...(options.ref !== undefined && { ref: options.ref }) },
      {
        onResult: () => {
          feed.awaitingStart = false;
        },
      },
    );
    stream.attach(feed, started);
    return stream;
  }

  /** Closes the connection for good; subscriptions end, waiting requests fail with `CLOSED`. */
  async close(): Promise<void> {
    this.#connection.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #stateChanged(state: ConnectionState, error?: ClientError): void {
    if (state === 'closed') this.#feeds.endAll(error);
    for (const listener of this.#stateListeners) listener(state, error);
  }
}
