import type { Duplex } from 'node:stream';
import {
  type ClientMessage,
  type ErrorMessage,
  errorBody,
  type OverflowMessage,
  type ProcessSnapshot,
  parseClientMessage,
  type ReplyMessage,
  type RequestId,
  type ServerEvent,
  type SubscriptionTarget,
} from '@mci/protocol';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Approvals } from '../approvals/approvals.ts';
import type { Principal } from '../auth/principal.ts';
import { handleChatRequest } from '../chat/chat-requests.ts';
import type { ChatService } from '../chat/chat-service.ts';
import type { RequestBudget } from '../http/rate-limit.ts';
import type { CreateProcessInput, ProcessManager } from '../processes/process-manager-types.ts';
import type { EventRoute } from '../processes/process-store.ts';
import { ServerError, toServerError } from '../processes/server-error.ts';
import { handleSessionRequest } from '../sessions/session-requests.ts';
import type { Sessions } from '../sessions/sessions.ts';
import { traceMessage } from '../tracing/message-span.ts';
import { FrameWriter } from './frame-writer.ts';
import { replayStored } from './replay.ts';
import { Subscriptions } from './subscriptions.ts';

/** The attributes of the span of a WebSocket request. */
const WS_MESSAGE = { 'network.protocol.name': 'websocket' };

/** Replays (`subscribe` with `since`) one connection runs at once; more are refused `LIMIT_EXCEEDED`. */
export const MAX_REPLAYS_PER_CONNECTION = 2;

/** Limits of one connection. */
export interface ConnectionLimits {
  /** Bytes waiting in the socket past which live events are dropped (and an `overflow` is sent). */
  maxBufferedBytes: number;
}

/**
 * One WebSocket client: reads requests, answers each with a reply or an error (the connection stays
 * open), and forwards the events it follows. A slow reader never makes the server buffer without
 * bound: past `maxBufferedBytes` its subscriptions are dropped and it is told (`overflow`) to
 * subscribe again with `since`.
 */
export class Connection {
  readonly subscriptions = new Subscriptions();
  /** Seq of the last event sent on this connection (0 before any). */
  lastSeq = 0;
  /** Live events dropped for this connection (for metrics). */
  dropped = 0;
  alive = true;
  private readonly writer: FrameWriter;
  /** The id of the principal the connection is authenticated as. */
  get principalId(): string {
    return this.principal.id;
  }
  /** Replays (`subscribe` with `since`) running on this connection. */
  private replays = 0;
  private readonly principal: Principal;
  private readonly manager: ProcessManager;
  private readonly logger: Logger | undefined;
  private readonly chat: ChatService | undefined;
  private readonly approvals: Approvals | undefined;
  private readonly sessions: Sessions | undefined;
  /**
   * One list per `process.create` under way: the events this connection may see but did not send
   * while it runs, before the new pid is known (and followed).
   */
  private readonly captures = new Set<Array<{ event: ServerEvent; route: EventRoute }>>();

  constructor(
    socket: WebSocket,
    stream: Duplex,
    principal: Principal,
    manager: ProcessManager,
    limits: ConnectionLimits,
    logger?: Logger,
    chat?: ChatService,
    approvals?: Approvals,
    sessions?: Sessions,
  ) {
    this.writer = new FrameWriter(socket, stream, limits.maxBufferedBytes);
    this.principal = principal;
    this.manager = manager;
    this.logger = logger;
    this.chat = chat;
    this.approvals = approvals;
    this.sessions = sessions;
  }

  /**
   * Handles one frame; never throws. A request counts in its principal's `budget` (shared with HTTP)
   * and past it is answered `RATE_LIMITED`; `stream.chunk` frames are data, not requests (a model
   * streams hundreds a second), bounded by the stream's buffer limits instead.
   */
  handleFrame(data: string, budget?: RequestBudget): void {
    const parsed = parseClientMessage(data);
    if (!parsed.ok) {
      const { code, message, path, id } = parsed.problem;
      this.sendError({ type: 'error', ...(id !== undefined && { id }), ...errorBody(code, message, path) });
      return;
    }
    const request = parsed.message;
    if (budget && request.type !== 'stream.chunk' && !budget.take(this.principal.id)) {
      this.fail(request, budget.error());
      return;
    }
    try {
      this.dispatch(request)?.catch((error: unknown) => this.fail(request, error));
    } catch (error) {
      this.fail(request, error);
    }
  }

  private fail(request: ClientMessage, error: unknown): void {
    const serverError = toServerError(error);
    if (serverError.code === 'INTERNAL')
      this.logger?.error({ err: error, request: request.type }, 'request failed');
    this.sendError({
      type: 'error',
      ...(request.id !== undefined && { id: request.id }),
      ...errorBody(serverError.code, serverError.message, serverError.path, serverError.retryAfter),
    });
  }

  /** Called for every event of the server; forwards those this connection follows and may see. */
  onEvent(event: ServerEvent, route: EventRoute): void {
    if (!this.visible(route)) return;
    this.subscriptions.learn(event);
    if (this.subscriptions.matches(event, route)) this.deliver(event);
    else for (const captured of this.captures) captured.push({ event, route });
  }

  /** Sends an error reply (also used by the gateway for binary frames). */
  sendError(message: ErrorMessage): void {
    this.writer.sendMessage(message);
  }

  private dispatch(request: ClientMessage): Promise<void> | undefined {
    const principal = this.principal;
    const id = request.id;
    switch (request.type) {
      case 'process.create': {
        const { type: _type, id: _id, traceparent, tracestate, ...input } = request;
        return traceMessage('process.create', { traceparent, tracestate }, WS_MESSAGE, () =>
          this.create(input, id),
        );
      }
      case 'process.signal': {
        const options = request.force === undefined ? undefined : { force: request.force };
        return this.manager.signal(request.pid, request.signal, principal, options).then((process) => {
          this.reply({ type: 'reply', id, request: request.type, result: { process } });
        });
      }
      case 'process.get':
        return this.manager.get(request.pid, principal).then((process) => {
          this.reply({ type: 'reply', id, request: request.type, result: { process } });
        });
      case 'process.list': {
        const { state, status, ref, limit, cursor } = request;
        const filter = {
          ...(state && { state }),
          ...(status && { status }),
          ...(ref && { ref }),
          ...(limit !== undefined && { limit }),
          ...(cursor !== undefined && { cursor }),
        };
        return this.manager.list(filter, principal).then((page) => {
          const result = { ...page, processes: page.items };
          this.reply({ type: 'reply', id, request: request.type, result });
        });
      }
      case 'subscribe': {
        const target = toTarget(request);
        const since = request.since;
        const done = (replayed: number, seq = this.manager.lastSeq()) =>
          this.reply({
            type: 'reply',
            id,
            request: request.type,
            result: { subscription: target, replayed, seq },
          });
        if (since !== undefined) {
          // Each replay holds a window of stored events until the socket takes them: a connection
          // runs a few at once, and a client that asks for more (or stops reading) is told so.
          if (this.replays >= MAX_REPLAYS_PER_CONNECTION)
            throw new ServerError(
              'LIMIT_EXCEEDED',
              `${MAX_REPLAYS_PER_CONNECTION} replays (subscribe with since) are running on this connection; send the next one after a reply`,
            );
          this.replays++;
          return this.checkTarget(target)
            .then(async () => done(await this.catchUp(target, since)))
            .finally(() => this.replays--);
        }
        // Followed from the moment the request arrives, as the check reads the store (events go only
        // to a connection whose principal may see them); a target that is not found is dropped again.
        // The reply's seq is that moment's: the events sent while the check ran come after it.
        const followed = this.subscriptions.has(target);
        this.subscriptions.add(target);
        const from = this.manager.lastSeq();
        return this.checkTarget(target).then(
          () => done(0, from),
          (error: unknown) => {
            if (!followed) this.subscriptions.remove(target);
            throw error;
          },
        );
      }
      case 'unsubscribe': {
        const target = toTarget(request);
        this.subscriptions.remove(target);
        this.reply({ type: 'reply', id, request: request.type, result: { subscription: target } });
        return;
      }
      case 'stream.start': {
        const { traceparent, tracestate } = request;
        const start = (session?: string) => {
          // The stream keeps this span's context: its processes' runs are its children.
          const stream = traceMessage('stream.start', { traceparent, tracestate }, WS_MESSAGE, () =>
            this.manager.openStream(
              {
                streamId: request.streamId,
                ...(request.ref !== undefined && { ref: request.ref }),
                ...(request.check !== undefined && { check: request.check }),
                ...(session !== undefined && { session }),
              },
              principal,
            ),
          );
          this.subscriptions.add({ streamId: stream.streamId });
          const result = { streamId: stream.streamId, ...(session !== undefined && { session }) };
          this.reply({ type: 'reply', id, request: request.type, result });
        };
        if (request.session === undefined) {
          start();
          return;
        }
        return this.manager.openSession(request.session, principal).then(start);
      }
      case 'stream.chunk':
        this.manager.getStream(request.streamId, principal).push(request.text);
        this.reply({ type: 'reply', id, request: request.type, result: { streamId: request.streamId } });
        return;
      case 'stream.end':
        this.manager.getStream(request.streamId, principal).end();
        this.reply({ type: 'reply', id, request: request.type, result: { streamId: request.streamId } });
        return;
      case 'approval.decide': {
        const { approvals } = this;
        if (!approvals) throw new ServerError('NOT_FOUND', 'this server has no approvals');
        return approvals
          .decide(request.approvalId, request.decision, principal, request.reason)
          .then((approval) => this.reply({ type: 'reply', id, request: request.type, result: { approval } }));
      }
      case 'chat.start':
      case 'chat.cancel':
      case 'chat.list':
      case 'chat.get':
      case 'chat.rename':
      case 'chat.delete': {
        const handle = () =>
          handleChatRequest(request, {
            chat: this.chat,
            principal,
            reply: (message) => this.reply(message),
            send: (event) => this.writer.sendMessage(event),
            subscribe: (streamId) => this.subscriptions.add({ streamId }),
          });
        // A turn's model requests and runs are one trace, under the request that started it.
        return request.type === 'chat.start'
          ? traceMessage('chat.start', undefined, WS_MESSAGE, handle)
          : handle();
      }
      case 'session.list':
      case 'session.get':
      case 'session.delete':
      case 'state.get':
      case 'state.set':
      case 'state.delete':
        return handleSessionRequest(request, this.sessions, principal, (message) => this.reply(message));
    }
  }

  /**
   * Creates a process, follows it and replies once the manager has (once the store committed it),
   * then sends the events of the process this connection got meanwhile, before it followed the pid.
   */
  private async create(input: CreateProcessInput, id: RequestId | undefined): Promise<void> {
    const captured: Array<{ event: ServerEvent; route: EventRoute }> = [];
    this.captures.add(captured);
    let snapshot: ProcessSnapshot;
    try {
      snapshot = await this.manager.create(input, this.principal);
    } finally {
      this.captures.delete(captured);
    }
    this.subscriptions.add({ pid: snapshot.pid });
    this.reply({ type: 'reply', id, request: 'process.create', result: { process: snapshot } });
    for (const { event, route } of captured) if (route.pid === snapshot.pid) this.deliver(event, true);
  }

  /** @throws ServerError NOT_FOUND for a pid or stream the principal cannot see. */
  private async checkTarget(target: SubscriptionTarget): Promise<void> {
    if ('pid' in target) await this.manager.get(target.pid, this.principal);
    if ('streamId' in target) await this.manager.checkStream(target.streamId, this.principal);
  }

  /** Replays the stored events of `target` after `since`, then follows it live (see {@link replayStored}). */
  private catchUp(target: SubscriptionTarget, since: number): Promise<number> {
    return replayStored(this.manager, this.principal, target, since, {
      open: () => this.writer.open,
      backedUp: () => this.writer.backedUp,
      drained: () => this.writer.drained(),
      send: (event) => {
        this.lastSeq = Math.max(this.lastSeq, event.seq);
        this.writer.sendEvent(event);
      },
      follow: () => this.subscriptions.add(target),
    });
  }

  private visible(route: EventRoute): boolean {
    return this.principal.role === 'operator' || route.owner === this.principal.id;
  }

  /**
   * Sends one event unless the socket is backed up; returns false when it overflowed instead. An
   * event at or below the last seq sent is a repeat and is skipped, unless it is `late`: one this
   * connection held back (never sent) until it followed its process.
   */
  private deliver(event: ServerEvent, late = false): boolean {
    if (event.seq <= this.lastSeq && !late) return true;
    if (!this.writer.open) return false;
    if (this.writer.backedUp) {
      this.overflow();
      return false;
    }
    this.lastSeq = Math.max(this.lastSeq, event.seq);
    this.writer.sendEvent(event);
    return true;
  }

  private overflow(): void {
    this.dropped++;
    const subscriptions = this.subscriptions.list();
    if (subscriptions.length === 0) return;
    this.subscriptions.clear();
    const notice: OverflowMessage = { type: 'overflow', since: this.lastSeq, subscriptions };
    this.logger?.warn(
      { principal: this.principal.id, since: this.lastSeq },
      'slow WebSocket reader: live events dropped',
    );
    this.writer.sendMessage(notice, true);
  }

  private reply(message: ReplyMessage): void {
    this.writer.sendMessage(message.id === undefined ? stripId(message) : message);
  }
}

function toTarget(request: {
  pid?: number;
  ref?: string;
  streamId?: string;
  all?: true;
}): SubscriptionTarget {
  if (request.pid !== undefined) return { pid: request.pid };
  if (request.ref !== undefined) return { ref: request.ref };
  if (request.streamId !== undefined) return { streamId: request.streamId };
  return { all: true };
}

function stripId<T extends { id?: RequestId }>(message: T): T {
  const { id: _id, ...rest } = message;
  return rest as T;
}
