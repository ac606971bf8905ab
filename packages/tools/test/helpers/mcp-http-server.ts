import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** The tools of the test server: five, listed two per page. */
const TOOLS: Tool[] = [
  {
    name: 'add',
    description: 'Adds two numbers',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'fail',
    description: 'Always fails',
    inputSchema: { type: 'object' },
    annotations: { destructiveHint: true },
  },
  { name: 'structured', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
  { name: 'wait', description: 'Waits until canceled', inputSchema: { type: 'object' } },
  { name: 'whoami', inputSchema: { type: 'object' } },
];
const PAGE_SIZE = 2;

/** A real Streamable HTTP MCP server on 127.0.0.1, port 0: stateless, or with sessions. */
export interface McpHttpTestServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  /** JSON-RPC methods received, in order (`initialize`, `tools/list`, ...). */
  methods: string[];
  /** `Authorization` header of each request. */
  authorizations: (string | undefined)[];
  /** With sessions: forgets every session, as a restarted server would (their requests get 404). */
  forgetSessions(): void;
}

/** Starts the test MCP server; `sessions` makes it stateful (`Mcp-Session-Id`). */
export async function startMcpHttpServer(options: { sessions?: boolean } = {}): Promise<McpHttpTestServer> {
  const state = { methods: [] as string[], authorizations: [] as (string | undefined)[] };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    if (req.method === 'DELETE' && typeof sessionId === 'string') {
      await sessions.get(sessionId)?.close();
      sessions.delete(sessionId);
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as
      | { method?: string }
      | { method?: string }[];
    for (const message of Array.isArray(body) ? body : [body])
      if (message.method) state.methods.push(message.method);
    state.authorizations.push(req.headers.authorization);
    if (options.sessions) {
      if (typeof sessionId === 'string') {
        const transport = sessions.get(sessionId);
        if (!transport) {
          // MCP: an unknown session is answered 404, and the client starts a new one.
          res.writeHead(404, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32001, message: 'Session not found' },
              id: null,
            }),
          );
          return;
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      await mcpServer(req.headers.authorization).connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    const server = mcpServer(req.headers.authorization);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get methods() {
      return state.methods;
    },
    get authorizations() {
      return state.authorizations;
    },
    forgetSessions() {
      for (const transport of sessions.values()) void transport.close();
      sessions.clear();
    },
    async [Symbol.asyncDispose]() {
      for (const transport of sessions.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function mcpServer(authorization: string | undefined): Server {
  const server = new Server({ name: 'mci-test-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const next = start + PAGE_SIZE;
    return { tools: TOOLS.slice(start, next), ...(next < TOOLS.length ? { nextCursor: String(next) } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, number>;
    switch (request.params.name) {
      case 'add':
        return { content: [{ type: 'text', text: String((args.a ?? 0) + (args.b ?? 0)) }] };
      case 'fail':
        return { isError: true, content: [{ type: 'text', text: 'it failed on purpose' }] };
      case 'structured':
        return { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } };
      case 'wait':
        // Ends when the request is aborted (the connection closes), or after 30 s at the latest.
        await new Promise<void>((resolve) => {
          extra.signal.addEventListener('abort', () => resolve());
          setTimeout(resolve, 30_000).unref();
        });
        return { content: [{ type: 'text', text: 'canceled' }] };
      case 'whoami':
        return { content: [{ type: 'text', text: authorization ?? 'anonymous' }] };
      default:
        return { isError: true, content: [{ type: 'text', text: `unknown tool ${request.params.name}` }] };
    }
  });
  return server;
}
