import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { errorBody } from '@mci/protocol';
import type { Approvals } from './approvals/approvals.ts';
import type { ChatService } from './chat/chat-service.ts';
import type { Limits } from './config/config-schema.ts';
import { createHttpApp, type HttpAppOptions } from './http/app.ts';
import { ConnectionCaps } from './http/connection-caps.ts';
import { createOriginPolicy, type OriginPolicy } from './http/origin-policy.ts';
import { RequestBudget } from './http/rate-limit.ts';
import type { Sessions } from './sessions/sessions.ts';
import { createWsGateway } from './ws/ws-gateway.ts';

/**
 * What {@link listen} serves: the HTTP API's services (as {@link HttpAppOptions} documents them), and
 * what the WebSocket gateway shares with it.
 */
export interface ListenOptions
  extends Pick<
    HttpAppOptions,
    | 'manager'
    | 'authenticator'
    | 'tools'
    | 'logger'
    | 'skills'
    | 'mcp'
    | 'clusterStats'
    | 'storeHealth'
    | 'consoleUrl'
  > {
  limits: Pick<
    Limits,
    | 'maxFrameBytes'
    | 'maxCodeBytes'
    | 'maxBufferedBytes'
    | 'maxBodyBytes'
    | 'headersTimeoutMs'
    | 'requestTimeoutMs'
    | 'maxConnections'
    | 'maxConnectionsPerAddress'
    | 'maxWebSocketsPerPrincipal'
    | 'rateLimitPerSecond'
  >;
  host: string;
  port: number;
  /** WebSocket ping interval in ms. */
  heartbeatMs: number;
  /**
   * Which `Host` names and page origins may use the HTTP API and the WebSocket.
   * @default the local default of `createOriginPolicy` for `host` and the authenticator's tokens
   */
  originPolicy?: OriginPolicy;
  /** Server-hosted conversations (`chat.*` over WebSocket, `GET /models`). */
  chat?: ChatService;
  /** Sessions and their state (`/sessions`, `session.*` and `state.*` over WebSocket). */
  sessions?: Sessions;
  /** Policies and approvals (`/approvals`, `/policies`, and `approval.decide` over WebSocket). */
  approvals?: Approvals;
}

/** The HTTP API and the WebSocket gateway, listening on one port. */
export interface Listener {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  /** Stops accepting connections; from now on every request gets 503 (`/healthz` included). */
  stopAccepting(): void;
  /** Closes WebSockets with `code` (1001) and every HTTP connection; resolves once all are closed. */
  close(code?: number): Promise<void>;
}

/**
 * Serves the HTTP API (`createHttpApp`) and the WebSocket gateway (`/ws`) over one `node:http` server,
 * with header and request timeouts and a connection cap (`limits`).
 * @throws the listen error (EADDRINUSE, EACCES, ...).
 */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { manager, authenticator, limits, logger } = options;
  const originPolicy =
    options.originPolicy ?? createOriginPolicy({ tokens: authenticator.required, bindHost: options.host });
  let accepting = true;
  // One request budget per principal for HTTP, WebSocket messages and MCP batches.
  const requestBudget = new RequestBudget(limits.rateLimitPerSecond);
  const gateway = createWsGateway({
    requestBudget,
    manager,
    authenticator,
    maxFrameBytes: limits.maxFrameBytes,
    maxCodeBytes: limits.maxCodeBytes,
    maxBufferedBytes: limits.maxBufferedBytes,
    maxWebSocketsPerPrincipal: limits.maxWebSocketsPerPrincipal,
    heartbeatMs: options.heartbeatMs,
    originPolicy,
    ...(logger && { logger }),
    ...(options.chat && { chat: options.chat }),
    ...(options.approvals && { approvals: options.approvals }),
    ...(options.sessions && { sessions: options.sessions }),
  });
  const app = createHttpApp({
    manager,
    authenticator,
    tools: options.tools,
    maxBodyBytes: limits.maxBodyBytes,
    requestBudget,
    isShuttingDown: () => !accepting,
    transportStats: () => ({ wsConnections: gateway.connections, wsEventsDropped: gateway.droppedEvents }),
    originPolicy,
    ...(logger && { logger }),
    ...(options.chat && { chat: options.chat }),
    ...(options.mcp && { mcp: options.mcp }),
    ...(options.approvals && { approvals: options.approvals }),
    ...(options.sessions && { sessions: options.sessions }),
    ...(options.skills && { skills: options.skills }),
    ...(options.clusterStats && { clusterStats: options.clusterStats }),
    ...(options.storeHealth && { storeHealth: options.storeHealth }),
    ...(options.consoleUrl !== undefined && { consoleUrl: options.consoleUrl }),
  });
  const handle = getRequestListener(app.fetch);
  // Slow clients: headers within headersTimeoutMs, the whole request within requestTimeoutMs (then
  // 408), checked every second; past maxConnections new sockets are closed at once.
  const requestTimeout = limits.requestTimeoutMs;
  const timeouts = {
    headersTimeout: Math.min(limits.headersTimeoutMs, requestTimeout),
    requestTimeout,
    connectionsCheckingInterval: Math.min(1000, requestTimeout),
  };
  // Past the connection caps a socket may only ask /healthz (see ConnectionCaps).
  const caps = new ConnectionCaps(limits.maxConnections, limits.maxConnectionsPerAddress);
  const healthOnly = new WeakSet<Socket>();
  const http = createHttpServer(timeouts, (request, response) => {
    if (
      healthOnly.has(request.socket) &&
      new URL(request.url ?? '/', 'http://localhost').pathname !== '/healthz'
    ) {
      refuseOverCap(response);
      return;
    }
    if (Number(request.headers['content-length'] ?? 0) > limits.maxBodyBytes) {
      refuseLargeBody(request, response, limits.maxBodyBytes);
      return;
    }
    void handle(request, response);
  });
  http.on('connection', (socket: Socket) => {
    const admission = caps.admit(socket);
    if (admission === 'refuse') socket.destroy();
    else if (admission === 'health') healthOnly.add(socket);
  });
  http.on('upgrade', (request, socket, head) => {
    if (healthOnly.has(socket as Socket)) {
      const body = JSON.stringify(errorBody('LIMIT_EXCEEDED', OVER_CAP));
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== '/ws') {
      const body = JSON.stringify(errorBody('NOT_FOUND', `no WebSocket endpoint at ${path}; use /ws`));
      socket.end(
        'HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nConnection: close\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    gateway.handleUpgrade(request, socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const httpClosed = new Promise<void>((resolve) => http.once('close', () => resolve()));
  const stopAccepting = () => {
    if (!accepting) return;
    accepting = false;
    http.close();
    http.closeIdleConnections();
  };
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}/ws`,
    port,
    stopAccepting,
    async close(code = 1001) {
      stopAccepting();
      await gateway.close(code, 'server shutting down');
      http.closeAllConnections();
      await httpClosed;
    },
  };
}

/** Most bytes of an oversized body read (and discarded) so the client sees the 413 before the close. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Answers 413 to a body whose declared length is over the limit. The body is read and discarded first
 * (up to {@link MAX_DRAIN_BYTES}): a client still writing when the socket closes would see a reset
 * instead of the answer.
 */
const OVER_CAP =
  'the server is at its connection limit (for all, or for your address); only GET /healthz is answered on this connection';

/** 503 on a socket past the connection caps: it may only ask `/healthz`. */
function refuseOverCap(response: ServerResponse): void {
  const body = JSON.stringify(errorBody('LIMIT_EXCEEDED', OVER_CAP));
  response.writeHead(503, { 'Content-Type': 'application/json', Connection: 'close' });
  response.end(body);
}

function refuseLargeBody(request: IncomingMessage, response: ServerResponse, maxBodyBytes: number): void {
  const body = JSON.stringify(errorBody('PAYLOAD_TOO_LARGE', `request body is over ${maxBodyBytes} bytes`));
  let drained = 0;
  request.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) request.destroy();
  });
  request.on('end', () => {
    response.writeHead(413, { 'Content-Type': 'application/json', Connection: 'close' });
    response.end(body);
  });
}
