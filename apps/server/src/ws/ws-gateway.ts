import type { RequestBudget } from '../http/rate-limit.ts';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, type HelloMessage } from '@mci/protocol';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Approvals } from '../approvals/approvals.ts';
import { type Authenticator, bearerToken } from '../auth/authenticator.ts';
import type { ChatService } from '../chat/chat-service.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { OriginPolicy } from '../http/origin-policy.ts';
import { refusalError } from '../http/request-guard.ts';
import type { ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import { Connection } from './connection.ts';

/** Reason phrases of the statuses an upgrade is refused with. */
const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  421: 'Misdirected Request',
  503: 'Service Unavailable',
};

/** Options of {@link createWsGateway}. */
export interface WsGatewayOptions {
  manager: ProcessManager;
  authenticator: Authenticator;
  /** Largest frame in bytes; a bigger one closes the connection with 1009. */
  maxFrameBytes: number;
  /** Largest program in bytes (told to clients in `hello`; the manager enforces it). */
  maxCodeBytes: number;
  /** Bytes a socket may have waiting before its live events are dropped. */
  maxBufferedBytes: number;
  /** Most WebSockets one principal has open; past it the upgrade is refused 429 `LIMIT_EXCEEDED`. */
  maxWebSocketsPerPrincipal?: number;
  /** Each principal's requests per second, shared with HTTP: a message past it gets `RATE_LIMITED`. */
  requestBudget?: RequestBudget;
  /** Ping interval in ms; a connection that has not answered the previous ping is terminated. */
  heartbeatMs: number;
  /** Which `Host` names and page origins may open a WebSocket (the HTTP API's policy). */
  originPolicy: OriginPolicy;
  logger?: Logger;
  /** Server-hosted conversations (`chat.*` requests). */
  chat?: ChatService;
  /** Policies and approvals (`approval.decide` requests). */
  approvals?: Approvals;
  /** Sessions and their state (`session.*`, `state.*` requests). */
  sessions?: Sessions;
}

/** The WebSocket side of the server (path `/ws`), attached to the HTTP server's `upgrade` event. */
export interface WsGateway {
  /**
   * Checks and upgrades a request for `/ws`: 421 for a `Host` the server does not answer to, 403 for
   * a page `Origin` that is not allowed, 401 on a bad token, 503 once closing.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Open connections. */
  readonly connections: number;
  /** Live events dropped for slow readers so far. */
  readonly droppedEvents: number;
  /** Refuses new connections and closes open ones with `code` (1001 going away). */
  close(code?: number, reason?: string): Promise<void>;
}

/**
 * Builds the WebSocket gateway: one {@link Connection} per client, a `hello` on open, ping/pong
 * heartbeats, and fan-out of the manager's events to the connections that follow them.
 */
export function createWsGateway(options: WsGatewayOptions): WsGateway {
  const { manager, authenticator, logger } = options;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes,
    clientTracking: true,
  });
  const connections = new Map<WebSocket, Connection>();
  let closing = false;
  let droppedFromClosed = 0;

  const stopEvents = manager.onEvent((event, route) => {
    for (const connection of connections.values()) connection.onEvent(event, route);
  });

  const heartbeat = setInterval(() => {
    for (const [socket, connection] of connections) {
      if (!connection.alive) {
        logger?.info('WebSocket missed a heartbeat: terminated');
        socket.terminate();
        continue;
      }
      connection.alive = false;
      socket.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  function refuse(socket: Duplex, error: ServerError): void {
    const body = JSON.stringify(errorBody(error.code, error.message));
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  return {
    handleUpgrade(request, socket, head) {
      if (closing) return refuse(socket, new ServerError('SHUTTING_DOWN', 'the server is shutting down'));
      const refusal = options.originPolicy.refusal({
        host: request.headers.host,
        origin: request.headers.origin,
      });
      if (refusal) return refuse(socket, refusalError(refusal));
      const url = new URL(request.url ?? '/', 'http://localhost');
      const token = bearerToken(request.headers.authorization) ?? url.searchParams.get('token') ?? undefined;
      const auth = authenticator.authenticate(token);
      if (!auth.ok) return refuse(socket, new ServerError('UNAUTHORIZED', auth.message));
      const cap = options.maxWebSocketsPerPrincipal ?? Number.POSITIVE_INFINITY;
      let own = 0;
      for (const connection of connections.values()) if (connection.principalId === auth.principal.id) own++;
      if (own >= cap)
        return refuse(
          socket,
          new ServerError(
            'LIMIT_EXCEEDED',
            `principal ${auth.principal.id} has ${own} WebSockets open, its most; close one first`,
          ),
        );
      wss.handleUpgrade(request, socket, head, (ws) => {
        const connection = new Connection(
          ws,
          socket,
          auth.principal,
          manager,
          { maxBufferedBytes: options.maxBufferedBytes },
          logger,
          options.chat,
          options.approvals,
          options.sessions,
        );
        connections.set(ws, connection);
        ws.on('pong', () => {
          connection.alive = true;
        });
        ws.on('message', (data, isBinary) => {
          connection.alive = true;
          if (isBinary) {
            connection.sendError({
              type: 'error',
              ...errorBody('VALIDATION', 'binary frames are not supported; send JSON text'),
            });
            return;
          }
          connection.handleFrame(data.toString(), options.requestBudget);
        });
        ws.on('error', (error) => logger?.debug({ err: error }, 'WebSocket error'));
        ws.on('close', () => {
          droppedFromClosed += connection.dropped;
          connections.delete(ws);
        });
        const hello: HelloMessage = {
          type: 'hello',
          principal: { id: auth.principal.id, role: auth.principal.role },
          seq: manager.lastSeq(),
          limits: { maxFrameBytes: options.maxFrameBytes, maxCodeBytes: options.maxCodeBytes },
        };
        ws.send(JSON.stringify(hello));
      });
    },
    get connections() {
      return connections.size;
    },
    get droppedEvents() {
      let total = droppedFromClosed;
      for (const connection of connections.values()) total += connection.dropped;
      return total;
    },
    async close(code = 1001, reason = 'server shutting down') {
      closing = true;
      clearInterval(heartbeat);
      stopEvents();
      const closed = [...connections.keys()].map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === socket.CLOSED) return resolve();
            const timer = setTimeout(() => socket.terminate(), 2000);
            socket.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            socket.close(code, reason);
          }),
      );
      await Promise.all(closed);
      wss.close();
    },
  };
}
