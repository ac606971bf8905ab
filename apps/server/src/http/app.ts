import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { Logger } from 'pino';
import type { Approvals } from '../approvals/approvals.ts';
import { type Authenticator, bearerToken } from '../auth/authenticator.ts';
import { registerChatRoutes } from '../chat/chat-routes.ts';
import type { ChatService } from '../chat/chat-service.ts';
import type { McpHttp } from '../mcp/http-sessions.ts';
import type { ProcessManager } from '../processes/process-manager-types.ts';
import type { StoreHealth } from '../processes/process-store.ts';
import { ServerError } from '../processes/server-error.ts';
import { registerSessionRoutes } from '../sessions/session-routes.ts';
import type { Sessions } from '../sessions/sessions.ts';
import { registerSkillRoutes } from '../skills/skill-routes.ts';
import type { Skills } from '../skills/skills.ts';
import { renderSandboxGlobals, type ToolDeclarationSource } from '../tools-dts/sandbox-globals-dts.ts';
import { traceRequests } from '../tracing/request-span.ts';
import { registerApprovalRoutes } from './approval-routes.ts';
import { bearerChallenge, registerNoOAuthMetadata } from './bearer-challenge.ts';
import { registerConsoleRoutes } from './console-routes.ts';
import type { HttpEnv } from './http-env.ts';
import { sendError } from './http-error.ts';
import { type ClusterStats, renderMetrics, type TransportStats } from './metrics.ts';
import type { OriginPolicy } from './origin-policy.ts';
import { registerProcessRoutes } from './process-routes.ts';
import { mcpMessageCount, principalRateLimit, RequestBudget } from './rate-limit.ts';
import { requestGuard } from './request-guard.ts';

/** A tool as `GET /tools` lists it. */
export interface ToolListing extends ToolDeclarationSource {
  /** A human-readable name for the tool (MCI `title`). */
  title?: string;
  annotations?: Record<string, unknown>;
  tags?: string[];
}

/** What the HTTP API is built from. */
export interface HttpAppOptions {
  manager: ProcessManager;
  authenticator: Authenticator;
  tools: readonly ToolListing[];
  /** Largest request body in bytes; larger ones get 413 `PAYLOAD_TOO_LARGE`. */
  maxBodyBytes: number;
  /** Each principal's requests per second, shared with the WebSocket gateway; past it 429 `RATE_LIMITED`. @default 200 a second */
  requestBudget?: RequestBudget;
  /** True once shutdown began: `/healthz` answers 503 and so does every other route. */
  isShuttingDown: () => boolean;
  transportStats: () => TransportStats;
  /** The nodes of the PostgreSQL database, for `/metrics` (absent on SQLite and in memory). */
  clusterStats?: () => Promise<ClusterStats>;
  /**
   * Whether the durable store commits writes now: when it does not, `/healthz` answers 503
   * `{ status: 'store_unavailable', message }`. @default always ok (the in-memory store)
   */
  storeHealth?: () => StoreHealth;
  /** Which `Host` names and page origins may use the API (see `createOriginPolicy`). */
  originPolicy: OriginPolicy;
  /** Where failures of the server's own (500 `INTERNAL`, values it could not encode) are logged. */
  logger?: Logger;
  /** Server-hosted conversations, for `GET /models`. */
  chat?: ChatService;
  /** Sessions and their state: `/sessions` (docs/sessions.md). */
  sessions?: Sessions;
  /** Saved skills: `/skills`, and each principal's skills in `/tools.d.ts` (docs/sessions.md). */
  skills?: Skills;
  /** The MCP endpoint mounted at `/mcp` (behind the same checks and tokens as every route). */
  mcp?: McpHttp;
  /** Policies and approvals: `/approvals`, `/policies`, and each tool's `decision` in `GET /tools`. */
  approvals?: Approvals;
  /** A console served elsewhere that page loads are redirected to. @default the built console */
  consoleUrl?: string;
}

/** How long a browser may cache a CORS preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Builds the HTTP API (Hono): the MCI process API under `/processes`, `/tools`, `/tools.d.ts`,
 * `/healthz` (no token needed) and `/metrics` (operators only). Every request first passes the
 * `Host`/`Origin` guard, then CORS (hono's `cors`, allowed origins from the policy). Errors are the one
 * error body `{ error, code, message, path? }`.
 * @see docs/server.md
 */
export function createHttpApp(options: HttpAppOptions): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const toolsDts = renderSandboxGlobals(options.tools);
  const toolList = options.tools.map(
    ({ name, title, description, inputSchema, annotations, tags, secrets }) => ({
      name,
      ...(title !== undefined && { title }),
      ...(description !== undefined && { description }),
      ...(inputSchema !== undefined && { inputSchema }),
      ...(annotations !== undefined && { annotations }),
      ...(tags !== undefined && { tags }),
      ...(secrets?.length && { secrets }),
    }),
  );

  app.onError((error, c) => sendError(c, error, options.logger));
  app.notFound((c) => sendError(c, new ServerError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`)));

  app.use('*', traceRequests());
  app.use('*', requestGuard(options.originPolicy));
  app.use(
    '*',
    cors({
      origin: (origin) => options.originPolicy.corsOrigin(origin),
      allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      // The Mcp-* and Last-Event-ID headers: browser MCP clients of /mcp (Streamable HTTP).
      allowHeaders: [
        'Content-Type',
        'Authorization',
        'Mcp-Session-Id',
        'Mcp-Protocol-Version',
        'Last-Event-ID',
      ],
      exposeHeaders: ['WWW-Authenticate', 'Retry-After', 'Mcp-Session-Id'],
      maxAge: PREFLIGHT_MAX_AGE_S,
    }),
  );

  app.get('/healthz', (c) => {
    if (options.isShuttingDown()) return c.json({ status: 'shutting_down' }, 503);
    const health = options.storeHealth?.() ?? { ok: true };
    if (!health.ok) return c.json({ status: 'store_unavailable', message: health.message }, 503);
    return c.json({ status: 'ok' });
  });

  registerNoOAuthMetadata(app);
  registerConsoleRoutes(app, options.consoleUrl === undefined ? {} : { url: options.consoleUrl });
  app.use('*', async (c, next) => {
    if (options.isShuttingDown()) throw new ServerError('SHUTTING_DOWN', 'the server is shutting down');
    const token = bearerToken(c.req.header('authorization'));
    const result = options.authenticator.authenticate(token);
    if (!result.ok) {
      c.header('WWW-Authenticate', bearerChallenge(Boolean(token), result.message));
      throw new ServerError('UNAUTHORIZED', result.message);
    }
    c.set('principal', result.principal);
    await next();
  });
  const budget = options.requestBudget ?? new RequestBudget(200);
  app.use('*', principalRateLimit(budget));
  app.use(
    '*',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: (c) =>
        sendError(
          c,
          new ServerError('PAYLOAD_TOO_LARGE', `request body is over ${options.maxBodyBytes} bytes`),
        ),
    }),
  );

  const { approvals, skills } = options;
  app.get('/tools', (c) => {
    if (!approvals) return c.json({ tools: toolList });
    // The decision in force for each tool, and the rule (index in GET /policies) that gave it.
    const tools = toolList.map((tool) => {
      const { decision, rule } = approvals.decisionFor(approvals.describe(tool.name));
      return { ...tool, decision, ...(rule !== undefined && { rule }) };
    });
    return c.json({ tools });
  });
  app.get('/tools.d.ts', async (c) => {
    // The caller's own skills follow the server's declarations.
    const own = skills ? await skills.declarations(c.get('principal').id) : '';
    return c.body(own === '' ? toolsDts : `${toolsDts}\n${own}`, 200, {
      'Content-Type': 'application/typescript; charset=utf-8',
    });
  });
  app.get('/metrics', async (c) => {
    if (c.get('principal').role !== 'operator')
      throw new ServerError('FORBIDDEN', 'metrics are for operators');
    const metrics = renderMetrics(
      options.manager.stats(),
      options.transportStats(),
      await options.clusterStats?.(),
    );
    return c.body(metrics, 200, {
      'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
    });
  });
  registerProcessRoutes(app, options.manager, options.logger);
  registerChatRoutes(app, options.chat);
  if (options.sessions) registerSessionRoutes(app, options.sessions);
  if (skills) registerSkillRoutes(app, skills);
  if (approvals) registerApprovalRoutes(app, approvals);
  const { mcp } = options;
  if (mcp)
    app.all('/mcp', async (c) => {
      // A batch counts as its calls: the first was counted with the request.
      const calls = await mcpMessageCount(c.req.raw);
      if (calls > 1 && !budget.take(c.get('principal').id, calls - 1)) throw budget.error();
      return mcp.handle(c.req.raw, c.get('principal'));
    });
  return app;
}
