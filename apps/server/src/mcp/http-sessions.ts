import { randomUUID } from 'node:crypto';
import type { ResolvedTool } from '@mci/schema';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Logger } from 'pino';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { createMciMcpServer, type MciMcpServer } from './mcp-server.ts';

/** Most MCP sessions open at once on one server; past it, a new session is refused (503). */
export const DEFAULT_MAX_MCP_SESSIONS = 1000;

/** Options of {@link createMcpHttp}. */
export interface McpHttpOptions {
  manager: ProcessManager;
  /** The tools of the server (the MCP tools and `run_code`'s declarations). */
  tools: readonly ResolvedTool[];
  /** True when the server has tokens: then `tasks/list` answers (only the caller's tasks). */
  authenticated: boolean;
  /** Cap of `run_code`'s text block, in UTF-8 bytes. */
  responsePipeBytes?: number;
  /** @default DEFAULT_MAX_MCP_SESSIONS */
  maxSessions?: number;
  logger?: Logger;
}

/** The `/mcp` endpoint: Streamable HTTP sessions, each an MCP server bound to its principal. */
export interface McpHttp {
  /**
   * Answers one request to `/mcp` (POST, GET for the SSE stream, DELETE to end a session) for an
   * authenticated `principal`. A session belongs to the principal that opened it: another one gets
   * 404, as for an unknown session.
   */
  handle(request: Request, principal: Principal): Promise<Response>;
  readonly sessions: number;
  /** Closes every session (their processes keep running until the server's own shutdown). */
  close(): Promise<void>;
}

interface Session {
  principal: Principal;
  transport: WebStandardStreamableHTTPServerTransport;
  mcp: MciMcpServer;
}

const jsonRpcError = (status: number, code: number, message: string) =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });

/**
 * Builds the Streamable HTTP endpoint on the SDK's web-standard transport, one transport and one
 * {@link createMciMcpServer MCP server} per session (`Mcp-Session-Id`).
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http
 */
export function createMcpHttp(options: McpHttpOptions): McpHttp {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_MCP_SESSIONS;

  const open = async (request: Request, principal: Principal): Promise<Response> => {
    if (sessions.size >= maxSessions)
      return jsonRpcError(503, -32000, `too many MCP sessions (${maxSessions}); end one with DELETE /mcp`);
    const sessionId = randomUUID();
    const mcp = createMciMcpServer({
      manager: options.manager,
      principal,
      sessionId,
      tools: options.tools,
      listTasks: options.authenticated,
      ...(options.responsePipeBytes !== undefined && { responsePipeBytes: options.responsePipeBytes }),
      ...(options.logger && { logger: options.logger }),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: () => {
        sessions.set(sessionId, { principal, transport, mcp });
      },
      onsessionclosed: () => {
        sessions.delete(sessionId);
        void mcp.close();
      },
    });
    await mcp.connect(transport);
    const response = await transport.handleRequest(request);
    // Not an initialize request (or a bad one): no session came of it.
    if (!sessions.has(sessionId)) await mcp.close();
    return response;
  };

  return {
    async handle(request, principal) {
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId === null) {
        if (request.method !== 'POST')
          return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        return open(request, principal);
      }
      const session = sessions.get(sessionId);
      if (!session || session.principal.id !== principal.id)
        return jsonRpcError(404, -32001, 'Session not found');
      return session.transport.handleRequest(request);
    },
    get sessions() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((session) => session.mcp.close()));
    },
  };
}
