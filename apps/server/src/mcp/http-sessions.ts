import { randomUUID } from 'node:crypto';
import type { ToolCatalog } from '@mci/sandbox';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Approvals } from '../approvals/approvals.ts';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import type { Skills } from '../skills/skills.ts';
import { createToolCatalog } from '../tool-search/tool-catalog.ts';
import { createMciMcpServer, type MciMcpServer } from './mcp-server.ts';
import type { ExposedTool } from './tool-definitions.ts';

/** Most MCP sessions open at once on one server; past it, a new session is refused (503). */
export const DEFAULT_MAX_MCP_SESSIONS = 1000;
/**
 * Most MCP sessions one principal has open; past it, opening one closes that principal's least
 * recently used session (never another principal's).
 */
export const DEFAULT_MAX_MCP_SESSIONS_PER_PRINCIPAL = 32;
/** An MCP session with no request for this long is closed (its client gets 404 and starts anew). */
export const DEFAULT_MCP_SESSION_IDLE_MS = 30 * 60 * 1000;

/** Options of {@link createMcpHttp}. */
export interface McpHttpOptions {
  manager: ProcessManager;
  /** The tools of the server (the MCP tools and `run_code`'s declarations). */
  tools: readonly ExposedTool[];
  /** The catalog of `tools`, shared by every session. @default one built for these sessions */
  catalog?: ToolCatalog;
  /** True when the server has tokens: then `tasks/list` answers (only the caller's tasks). */
  authenticated: boolean;
  /** Cap of `run_code`'s text block, in UTF-8 bytes. */
  responsePipeBytes?: number;
  /** @default DEFAULT_MAX_MCP_SESSIONS */
  maxSessions?: number;
  /** @default DEFAULT_MAX_MCP_SESSIONS_PER_PRINCIPAL */
  maxSessionsPerPrincipal?: number;
  /** @default DEFAULT_MCP_SESSION_IDLE_MS */
  sessionIdleMs?: number;
  logger?: Logger;
  /** Policies and approvals (elicitations, `list_approvals`, `decide_approval`). */
  approvals?: Approvals;
  /** Saved skills, listed to each principal as tools `skill_<name>`. */
  skills?: Pick<Skills, 'all'>;
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
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_MCP_SESSIONS;
  const perPrincipal = options.maxSessionsPerPrincipal ?? DEFAULT_MAX_MCP_SESSIONS_PER_PRINCIPAL;
  // Idle-expiring; a session leaving the cache (DELETE, idle, its principal's cap, shutdown) is
  // closed. The count cap is enforced before a session is added, so the cache never evicts by count.
  const catalog = options.catalog ?? createToolCatalog(options.tools);
  const sessions = new LRUCache<string, Session>({
    max: maxSessions + 1,
    ttl: options.sessionIdleMs ?? DEFAULT_MCP_SESSION_IDLE_MS,
    ttlAutopurge: true,
    updateAgeOnGet: true,
    dispose: (session) => void session.mcp.close(),
  });

  /** Makes room for a session of `principal`: false when the server is full of other principals' sessions. */
  const makeRoom = (principal: Principal): boolean => {
    let own = 0;
    let oldest: string | undefined;
    // Least recently used first.
    for (const id of sessions.rkeys()) {
      if (sessions.peek(id)?.principal.id !== principal.id) continue;
      own++;
      oldest ??= id;
    }
    if (own >= perPrincipal && oldest !== undefined) {
      sessions.delete(oldest);
      return true;
    }
    return sessions.size < maxSessions;
  };

  const open = async (request: Request, principal: Principal): Promise<Response> => {
    if (!makeRoom(principal))
      return jsonRpcError(503, -32000, `the server has ${maxSessions} MCP sessions open; try again later`);
    const sessionId = randomUUID();
    const mcp = createMciMcpServer({
      manager: options.manager,
      principal,
      sessionId,
      tools: options.tools,
      catalog,
      listTasks: options.authenticated,
      ...(options.responsePipeBytes !== undefined && { responsePipeBytes: options.responsePipeBytes }),
      ...(options.logger && { logger: options.logger }),
      ...(options.approvals && { approvals: options.approvals }),
      ...(options.skills && { skills: options.skills }),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: () => {
        sessions.set(sessionId, { principal, transport, mcp });
      },
      onsessionclosed: () => {
        sessions.delete(sessionId);
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
      // Already closing (dispose): this waits for them.
      await Promise.allSettled(open.map((session) => session.mcp.close()));
    },
  };
}
