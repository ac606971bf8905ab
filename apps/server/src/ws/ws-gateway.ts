import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HelloMessage } from '@mci/protocol';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import { type Authenticator, bearerToken } from '../auth/authenticator.ts';
import type { ChatService } from '../chat/chat-service.ts';
import type { ProcessManager } from '../processes/process-manager-types.ts';
import { Connection } from './connection.ts';

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
  /** Ping interval in ms; a connection that has not answered the previous ping is terminated. */
  heartbeatMs: number;
  logger?: Logger;
  /** Server-hosted conversations (`chat.*` requests). */
  chat?: ChatService;
}

/** The WebSocket side of the server (path `/ws`), attached to the HTTP server's `upgrade` event. */
export interface WsGateway {
  /** Authenticates and upgrades a request for `/ws` (401 on a bad token, 503 once closing). */
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

  function refuse(socket: Duplex, status: number, message: string): void {
    const body = JSON.stringify({ error: message, code: status === 401 ? 'UNAUTHORIZED' : 'SHUTTING_DOWN' });
    socket.end(
      `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Service Unavailable'}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  return {
    handleUpgrade(request, socket, head) {
      if (closing) return refuse(socket, 503, 'the server is shutting down');
      const url = new URL(request.url ?? '/', 'http://localhost');
      const token = bearerToken(request.headers.authorization) ?? url.searchParams.get('token') ?? undefined;
      const auth = authenticator.authenticate(token);
      if (!auth.ok) return refuse(socket, 401, auth.message);
      wss.handleUpgrade(request, socket, head, (ws) => {
        const connection = new Connection(
          ws,
          auth.principal,
          manager,
          { maxBufferedBytes: options.maxBufferedBytes },
          logger,
          options.chat,
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
              code: 'VALIDATION',
              message: 'binary frames are not supported; send JSON text',
            });
            return;
          }
          connection.handleFrame(data.toString());
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
