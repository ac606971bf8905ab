import {
  type ChatEvent,
  type ClientMessage,
  type ClientMessageType,
  type DistributiveOmit,
  type HelloMessage,
  type OverflowMessage,
  type ReplyTo,
  type ServerEvent,
  ServerMessageSchema,
} from '@mci/protocol';
import { backoffDelay, type ReconnectPolicy } from './backoff.ts';
import { ClientError } from './client-error.ts';
import {
  describeSocketError,
  OPEN,
  type SocketFactory,
  upgradeStatus,
  type WebSocketLike,
} from './socket.ts';

/** Where a client's connection is: opening, open, waiting to reconnect, or closed for good. */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A request as the caller writes it: the connection adds the `id`. */
export type Outgoing = DistributiveOmit<ClientMessage, 'id'>;
/** The `result` of the reply to a request of type `T`. */
export type ResultOf<T extends ClientMessageType> = ReplyTo<T>['result'];

/** What the connection reports to its owner (the client). */
export interface ConnectionHandlers {
  /** A (re)opened connection said hello; `reconnected` is false the first time. Runs before queued requests go out. */
  onOpen(hello: HelloMessage, reconnected: boolean): void;
  onEvent(event: ServerEvent): void;
  onOverflow(notice: OverflowMessage): void;
  /** A `chat.*` turn event of a server-hosted conversation (they carry no seq). */
  onChatEvent?(event: ChatEvent): void;
  onState(state: ConnectionState, error?: ClientError): void;
  /** Something went wrong that no request is waiting for (a message that breaks the protocol). */
  onError(error: ClientError): void;
}

/** Settings of a {@link Connection} (defaults are filled in by `connect`). */
export interface ConnectionSettings {
  url: string;
  token: string | undefined;
  reconnect: ReconnectPolicy | undefined;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  maxBacklog: number;
  socketFactory: SocketFactory;
}

interface Pending {
  id: number;
  frame: string;
  type: ClientMessageType;
  /** Safe to send again after a drop (reads): true; otherwise a drop in flight fails it. */
  retry: boolean;
  resolve(result: unknown): void;
  reject(error: ClientError): void;
  /** Runs as the reply is read, before frames read after it (a promise's handlers would run later). */
  onResult: ((result: unknown) => void) | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Requests that only read: repeating them after a dropped connection changes nothing. (`unsubscribe`
 * is not repeated: a new connection starts with no subscriptions.)
 */
const IDEMPOTENT = new Set<ClientMessageType>(['process.get', 'process.list']);

/**
 * One logical connection to the server over a series of WebSockets: opens, waits for `hello`,
 * matches replies to requests by id, queues requests (bounded) while disconnected, and reconnects with
 * backoff. Reads (`process.get`, `process.list`) in flight at a drop are sent again; other requests in
 * flight fail with `DISCONNECTED`, since the server may already have applied them.
 */
export class Connection {
  state: ConnectionState = 'connecting';
  hello: HelloMessage | undefined;
  /** Highest event seq seen (or announced by `hello`). */
  knownSeq = 0;
  readonly #settings: ConnectionSettings;
  readonly #handlers: ConnectionHandlers;
  #socket: WebSocketLike | undefined;
  #nextId = 1;
  readonly #inflight = new Map<number, Pending>();
  #backlog: Pending[] = [];
  #attempt = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Why the connection closed for good (requests made afterwards fail with it). */
  #closedBy: ClientError | undefined;

  constructor(settings: ConnectionSettings, handlers: ConnectionHandlers) {
    this.#settings = settings;
    this.#handlers = handlers;
  }

  /** Opens the first connection; resolves on `hello`. @throws ClientError `CONNECT_FAILED`, `UNAUTHORIZED` */
  start(): Promise<HelloMessage> {
    return new Promise((resolve, reject) => {
      this.#open((error, hello) => (error ? reject(error) : resolve(hello as HelloMessage)));
    });
  }

  /**
   * Sends a request and resolves with its reply's `result`. Waits for a connection when there is none
   * (at most `maxBacklog` requests wait; the rest fail with `BACKLOG_FULL`).
   * @throws ClientError with the server's code (`NOT_FOUND`, `CONFLICT`, ...) or `TIMEOUT`,
   * `DISCONNECTED`, `BACKLOG_FULL`, `CLOSED`.
   */
  request<T extends ClientMessageType>(
    message: Outgoing & { type: T },
    options: { retry?: boolean; onResult?: (result: ResultOf<T>) => void } = {},
  ): Promise<ResultOf<T>> {
    if (this.state === 'closed') {
      return Promise.reject(this.#closedBy ?? new ClientError('CLOSED', 'the client is closed'));
    }
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      const pending: Pending = {
        id,
        type: message.type,
        frame: JSON.stringify({ ...message, id }),
        retry: options.retry ?? IDEMPOTENT.has(message.type),
        resolve: resolve as (result: unknown) => void,
        reject,
        onResult: options.onResult as ((result: unknown) => void) | undefined,
        timer: undefined,
      };
      const timeoutMs = this.#settings.requestTimeoutMs;
      if (Number.isFinite(timeoutMs)) {
        pending.timer = setTimeout(() => this.#timeout(pending), timeoutMs);
      }
      if (this.state === 'open') this.#send(pending);
      else if (this.#backlog.length >= this.#settings.maxBacklog) {
        this.#settle(pending);
        reject(
          new ClientError(
            'BACKLOG_FULL',
            `${this.#backlog.length} requests are already waiting for the connection to come back (maxBacklog)`,
          ),
        );
      } else this.#backlog.push(pending);
    });
  }

  /** Closes for good: pending requests fail with `CLOSED`. */
  close(): void {
    if (this.state === 'closed') return;
    clearTimeout(this.#retryTimer);
    this.#fail(new ClientError('CLOSED', 'the client was closed'));
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket) {
      detach(socket);
      socket.close(1000, 'client closed');
    }
  }

  #open(first?: (error: ClientError | undefined, hello?: HelloMessage) => void): void {
    const { url, token, socketFactory, connectTimeoutMs } = this.#settings;
    let settled = false;
    let socket: WebSocketLike | undefined;
    let failure: ClientError | undefined;
    const timer = setTimeout(() => {
      failure = new ClientError('CONNECT_FAILED', `no hello from ${url} within ${connectTimeoutMs} ms`);
      if (socket) {
        detach(socket);
        socket.close();
      }
      onGone();
    }, connectTimeoutMs);
    const onGone = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (this.#socket === socket) this.#socket = undefined;
      if (this.state === 'closed') return;
      if (first) {
        const error = failure ?? new ClientError('CONNECT_FAILED', `cannot connect to ${url}`);
        this.state = 'closed';
        this.#fail(error);
        first(error);
        return;
      }
      this.#lost(failure);
    };
    const attach = (opened: WebSocketLike) => {
      socket = opened;
      // A late socket from an attempt that already timed out, or a client closed meanwhile.
      if (settled || this.state === 'closed') {
        opened.close();
        return;
      }
      this.#socket = opened;
      opened.onerror = (event) => {
        const status = upgradeStatus(event);
        failure =
          status === 401
            ? new ClientError('UNAUTHORIZED', `the server refused the token (HTTP 401) at ${url}`)
            : new ClientError(
                'CONNECT_FAILED',
                `cannot connect to ${url}: ${status ? `HTTP ${status}` : describeSocketError(event)}`,
              );
      };
      opened.onclose = () => onGone();
      opened.onmessage = (event) => {
        const hello = this.#receive(event.data);
        if (hello === undefined || settled) return;
        settled = true;
        clearTimeout(timer);
        // From here on a close is a dropped connection, not a failed attempt.
        opened.onclose = () => {
          if (this.#socket === opened) this.#socket = undefined;
          if (this.state !== 'closed') this.#lost();
        };
        const reconnected = this.hello !== undefined;
        this.hello = hello;
        this.knownSeq = Math.max(this.knownSeq, hello.seq);
        this.#attempt = 0;
        this.#setState('open');
        first?.(undefined, hello);
        this.#handlers.onOpen(hello, reconnected);
        for (const pending of this.#backlog.splice(0)) this.#send(pending);
      };
    };
    Promise.resolve()
      .then(() => socketFactory(url, token))
      .then(attach, (error: unknown) => {
        failure = new ClientError(
          'CONNECT_FAILED',
          `cannot connect to ${url}: ${describeSocketError(error)}`,
          {
            cause: error,
          },
        );
        onGone();
      });
  }

  /** Handles one frame; returns the hello when it was one. */
  #receive(data: unknown): HelloMessage | undefined {
    let json: unknown;
    try {
      json = JSON.parse(typeof data === 'string' ? data : String(data));
    } catch (error) {
      this.#handlers.onError(
        new ClientError('PROTOCOL', 'the server sent a frame that is not JSON', { cause: error }),
      );
      return undefined;
    }
    const parsed = ServerMessageSchema.safeParse(json);
    if (!parsed.success) {
      const id = (json as { id?: unknown } | null)?.id;
      const error = new ClientError(
        'PROTOCOL',
        `the server sent a message the protocol does not allow: ${parsed.error.message}`,
      );
      const pending = typeof id === 'number' ? this.#inflight.get(id) : undefined;
      if (pending) {
        this.#settle(pending);
        pending.reject(error);
      } else this.#handlers.onError(error);
      return undefined;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'hello':
        return message;
      case 'reply':
      case 'error': {
        const pending = typeof message.id === 'number' ? this.#inflight.get(message.id) : undefined;
        if (!pending) {
          if (message.type === 'error') {
            this.#handlers.onError(new ClientError(message.code, message.message, detailsOf(message)));
          }
          return undefined;
        }
        this.#settle(pending);
        if (message.type === 'reply') {
          pending.onResult?.(message.result);
          pending.resolve(message.result);
        } else pending.reject(new ClientError(message.code, message.message, detailsOf(message)));
        return undefined;
      }
      case 'overflow':
        this.#handlers.onOverflow(message);
        return undefined;
      case 'chat.token':
      case 'chat.step':
      case 'chat.done':
      case 'chat.error':
        this.#handlers.onChatEvent?.(message);
        return undefined;
      default:
        this.knownSeq = Math.max(this.knownSeq, message.seq);
        this.#handlers.onEvent(message);
        return undefined;
    }
  }

  #send(pending: Pending): void {
    const socket = this.#socket;
    if (socket === undefined || socket.readyState !== OPEN) {
      this.#backlog.push(pending);
      return;
    }
    this.#inflight.set(pending.id, pending);
    socket.send(pending.frame);
  }

  /** An established connection dropped: keep reads, fail the rest in flight, and reconnect (or give up). */
  #lost(cause?: ClientError): void {
    const inflight = [...this.#inflight.values()].sort((a, b) => a.id - b.id);
    this.#inflight.clear();
    const again = inflight.filter((pending) => pending.retry);
    for (const pending of inflight) {
      if (pending.retry) continue;
      this.#settle(pending);
      pending.reject(
        new ClientError(
          'DISCONNECTED',
          `the connection dropped before the server answered ${pending.type}; it may or may not have been applied`,
          { cause },
        ),
      );
    }
    this.#backlog = [...again, ...this.#backlog];
    const policy = this.#settings.reconnect;
    if (cause?.code === 'UNAUTHORIZED' || policy === undefined || this.#attempt >= policy.maxAttempts) {
      const error =
        cause?.code === 'UNAUTHORIZED'
          ? cause
          : new ClientError('DISCONNECTED', `lost the connection to ${this.#settings.url}`, { cause });
      this.state = 'closed';
      this.#fail(error);
      return;
    }
    this.#attempt++;
    this.#setState('reconnecting', cause);
    this.#retryTimer = setTimeout(() => this.#open(), backoffDelay(policy, this.#attempt));
  }

  #timeout(pending: Pending): void {
    this.#settle(pending);
    this.#backlog = this.#backlog.filter((other) => other !== pending);
    pending.reject(
      new ClientError(
        'TIMEOUT',
        `no reply to ${pending.type} within ${this.#settings.requestTimeoutMs} ms (requestTimeoutMs)`,
      ),
    );
  }

  #settle(pending: Pending): void {
    clearTimeout(pending.timer);
    this.#inflight.delete(pending.id);
  }

  /** Fails every request, in flight or waiting, and reports the closed state. */
  #fail(error: ClientError): void {
    this.#closedBy ??= error;
    const all = [...this.#inflight.values(), ...this.#backlog.splice(0)];
    this.#inflight.clear();
    for (const pending of all) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.#setState('closed', error);
  }

  #setState(state: ConnectionState, error?: ClientError): void {
    // Retries in a row stay one `reconnecting`; `closed` is reported once, by #fail.
    if (this.state === state && state !== 'closed') return;
    this.state = state;
    this.#handlers.onState(state, error);
  }
}

function detach(socket: WebSocketLike): void {
  socket.onopen = null;
  socket.onmessage = null;
  socket.onclose = null;
  socket.onerror = () => {};
}

/** The bad field and the seconds to wait of a server's error message, as {@link ClientError} options. */
function detailsOf(message: { path?: string | undefined; retryAfter?: number | undefined }): {
  path?: string;
  retryAfter?: number;
} {
  return {
    ...(message.path !== undefined && { path: message.path }),
    ...(message.retryAfter !== undefined && { retryAfter: message.retryAfter }),
  };
}
