import { type Checker, createChecker } from '@mci/check';
import { createIntentStream } from '@mci/intent-extractor';
import type { CheckMode } from '@mci/protocol';
import { createSandboxPool, type Isolation, type SandboxPool } from '@mci/sandbox';
import { Redactor } from '@mci/schema';
import { createToolRunner, loadTools, type ToolRunner } from '@mci/tools';
import type { LevelWithSilent } from 'pino';
import { ApprovalStore } from './approvals/approval-store.ts';
import { Approvals } from './approvals/approvals.ts';
import { type Credential, Credentials } from './approvals/credentials.ts';
import type { PolicyRule } from './approvals/policy.ts';
import { createAuthenticator, type TokenGrant } from './auth/authenticator.ts';
import { isLoopbackHost } from './auth/loopback.ts';
import type { ChatService } from './chat/chat-service.ts';
import { ConversationStore } from './chat/conversation-store.ts';
import {
  type ChatSettings,
  createChatService,
  startConversationRetention,
} from './chat/create-chat-service.ts';
import { checkDeclarations } from './check/check-declarations.ts';
import { checkQuotas } from './config/check-quotas.ts';
import { ConfigError } from './config/config-error.ts';
import { type Limits, LimitsSchema } from './config/config-schema.ts';
import { DEFAULT_PORT } from './config/load-config.ts';
import { isConsoleBuilt } from './http/console-routes.ts';
import { createOriginPolicy } from './http/origin-policy.ts';
import { type Listener, listen } from './listener.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMcpHttp } from './mcp/http-sessions.ts';
import { createProcessManager } from './processes/process-manager.ts';
import type { ProcessManager } from './processes/process-manager-types.ts';
import type { QuotaOptions } from './processes/quota-policy.ts';
import { collectServerSecrets, secretsOfTool } from './secrets/server-secrets.ts';
import { processSessions } from './sessions/process-sessions.ts';
import { startSessionRetention } from './sessions/session-retention.ts';
import { SessionStore } from './sessions/session-store.ts';
import { Sessions } from './sessions/sessions.ts';
import { SkillStore } from './skills/skill-store.ts';
import { Skills } from './skills/skills.ts';
import type { RetentionOptions } from './store/retention.ts';
import { openServerStore, startServerRetention } from './store/server-store.ts';
import { openDatabase } from './store/sql/sqlite-file.ts';
import { corruptError, isCorruption } from './store/store-error.ts';
import { createToolCatalog } from './tool-search/tool-catalog.ts';
import { withCatalog } from './tool-search/with-catalog.ts';

/** Options of {@link createServer}; every field but `file` is optional. */
export interface ServerOptions {
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
  /** Port (0 picks a free one). @default 7687 */
  port?: number;
  /** Path of the MCI tool file (the command line picks a default; the server takes it as given). */
  file: string;
  /** Environment for the tools (`{{env.X}}`, cli commands), merged over `process.env`. */
  env?: Record<string, string | undefined>;
  /** Sandbox workers and processes run at once. @default the sandbox pool's default (CPUs) */
  concurrency?: number;
  /**
   * The check of each program before it runs, for processes that give no `check` of their own
   * (docs/sandbox.md): `block` ends a run whose program is certainly wrong `failed` with
   * `CHECK_FAILED` before anything runs, `warn` runs it with the findings as warnings, `off` skips it.
   * @default 'block'
   */
  check?: CheckMode;
  /** Most queued processes. @default 1000 */
  maxQueue?: number;
  /**
   * Most queued processes of one principal. @default half of `maxQueue` with tokens; without tokens
   * every caller is one principal, and the whole queue is its
   */
  maxQueuedPerPrincipal?: number;
  /**
   * Quotas per principal id (docs/operations.md, "Quotas"): `maxRunning`, `maxQueued`,
   * `runsPerMinute`, `cpuMsPerMinute`. `maxQueuedPerPrincipal` (and, with tokens, half the
   * concurrency for `maxRunning`) are the defaults of `quotas.default`. @default no per-minute quotas
   */
  quotas?: QuotaOptions;
  /** Hosts (`HOST` or `HOST:PORT`) sandboxed `fetch` may reach even when loopback or private. */
  allowNet?: string[];
  /**
   * How runs are kept apart (docs/sandbox.md, "Isolation"): `context`, one isolate per principal in
   * each sandbox worker with a fresh context per run; `isolate`, a fresh isolate per run.
   * @default 'context' (or `MCI_ISOLATION`)
   */
  isolation?: Isolation;
  /** Policy rules of tool calls (docs/approvals.md); stored rules win once an operator sets them. */
  policies?: PolicyRule[];
  /** How long an approval waits for a decision, in ms. @default 600000 (10 minutes) */
  approvalTimeoutMs?: number;
  /** Credentials the host adds to the sandbox's `fetch`, rendered from `env` (docs/security.md). */
  credentials?: Credential[];
  /**
   * More environment variables whose values are secrets (beyond every `{{env.X}}` the tools read, the
   * credentials, the tokens, the model keys and credentials in URLs). @default none
   */
  secrets?: string[];
  /** Environment variables tools read that are not secrets (URLs, regions). @default none */
  publicEnv?: string[];
  /**
   * Where the server puts its secret values: outputs, logs, errors, events, stored records, MCP and
   * chat replies are redacted with it (docs/security.md). Give the one the `logger` was made with so
   * log lines are redacted too. @default a new one (the default logger uses it)
   */
  redactor?: Redactor;
  /** Tokens; none means loopback only, every caller an operator. */
  tokens?: TokenGrant[];
  /** Allow a non-loopback `host` without tokens. @default false */
  insecure?: boolean;
  /**
   * Page origins allowed to call the HTTP API and open WebSockets (CORS): exact origins, `:*` for any
   * port, or `*` (only without tokens). @default without tokens: `http://localhost:*`,
   * `http://127.0.0.1:*`, `http://[::1]:*`; with tokens: none. @see createOriginPolicy
   */
  corsOrigins?: string[];
  /** URLs the server is reached at through a proxy: their hosts are accepted in `Host`. */
  publicUrls?: string[];
  /**
   * A web console served elsewhere (`pnpm dev`: Vite's dev server): page loads are redirected there.
   * @default the console built into `apps/server/console`, served at `/`
   */
  consoleUrl?: string;
  limits?: Partial<Limits>;
  /** WebSocket ping interval in ms. @default 30000 */
  heartbeatMs?: number;
  /** Grace period for running processes on {@link MciServer.close}, in ms. @default 10000 */
  shutdownGraceMs?: number;
  /** @default a pino logger at {@link ServerOptions.logLevel} on stdout */
  logger?: Logger;
  /** Level of the default logger. @default 'info' */
  logLevel?: LevelWithSilent;
  /** A sandbox pool to use instead of creating one (it is not closed with the server). */
  pool?: SandboxPool;
  /**
   * The durable process store: an SQLite file (created with its directory) or `:memory:`. Processes,
   * runs, outputs, logs and events then survive a restart. @default none: processes live in memory
   * (`mci serve` picks a per-user file, see `defaultDbPath`)
   */
  db?: string;
  /**
   * This server's node name when `db` is a PostgreSQL URL: its lease row in the `nodes` table
   * (see docs/cluster.md); unique among the live nodes of a database. @default `${hostname}-${pid}`
   */
  node?: string;
  /**
   * Share the PostgreSQL database `db` with other servers (nodes) as one system: see docs/cluster.md.
   * @default false
   */
  cluster?: boolean;
  /**
   * How long (ms) this node's lease lasts without renewal on a PostgreSQL database; it is renewed every
   * fifth of that. @default 10000
   */
  nodeLeaseMs?: number;
  /**
   * Called when another node of the cluster ended this node's lease (it was not renewed in time) and
   * took over its processes; the store drops this node's writes from then on, so the server should
   * stop (`mci serve` exits 1). @default the error is only logged
   */
  onLeaseLost?: (node: string) => void;
  /**
   * Background deletion of old idle processes from the `db` store; `false` keeps everything.
   * @default { maxAgeMs: 7 days, maxProcesses: 100000, maxBytes: 1 GiB }
   */
  retention?: RetentionOptions | false;
  /**
   * Server-hosted conversations: the models (`provider:model`, keys from the environment) and their
   * options. Conversations are stored in `db`. @default no model (`chat.start` is refused)
   */
  chat?: ChatSettings;
}

/** A listening server. */
export interface MciServer {
  /** `http://host:port` */
  readonly url: string;
  /** `ws://host:port/ws` */
  readonly wsUrl: string;
  /** Where a browser opens the web console; `undefined` when it is not built and not served elsewhere. */
  readonly consoleUrl: string | undefined;
  readonly port: number;
  readonly manager: ProcessManager;
  /**
   * Graceful shutdown: refuse new connections and work (503), let running processes finish for the
   * grace period, cancel the rest, close WebSockets with 1001, release tools and sandboxes. Idempotent.
   */
  close(options?: { graceMs?: number }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Loads the tool file, starts the sandbox pool, the process manager, the HTTP API and the WebSocket
 * gateway (`/ws`) on one port, and listens.
 * @throws ConfigError `INSECURE_BIND` for a non-loopback host without tokens (unless `insecure`),
 * `CONFIG_INVALID` for a bad CORS origin or public URL, or bad `quotas` (a field, or an id no token has);
 * a `SchemaError` from `@mci/tools` for a bad tool file; a `StoreError` for a `db` that cannot be opened;
 * the listen error (EADDRINUSE, ...).
 */
export async function createServer(options: ServerOptions): Promise<MciServer> {
  const host = options.host ?? '127.0.0.1';
  let authenticator: ReturnType<typeof createAuthenticator>;
  try {
    authenticator = createAuthenticator(options.tokens ?? []);
  } catch (error) {
    throw new ConfigError('CONFIG_INVALID', (error as Error).message, { path: 'tokens' });
  }
  checkQuotas(options.quotas, authenticator.principals);
  if (!authenticator.required && !isLoopbackHost(host) && !options.insecure) {
    throw new ConfigError(
      'INSECURE_BIND',
      `refusing to listen on ${host} without tokens: configure tokens (MCI_API_KEY or a config file) or pass --insecure`,
      { path: 'host' },
    );
  }
  let credentials: Credentials;
  try {
    credentials = new Credentials(options.credentials ?? [], options.env ?? process.env);
  } catch (error) {
    throw new ConfigError('CONFIG_INVALID', (error as Error).message, { path: 'credentials' });
  }
  const originPolicy = createOriginPolicy({
    corsOrigins: options.corsOrigins,
    tokens: authenticator.required,
    bindHost: host,
    publicUrls: options.publicUrls,
  });
  const limits = LimitsSchema.parse(options.limits ?? {});
  const redactor = options.redactor ?? new Redactor();
  const logger = options.logger ?? createLogger({ level: options.logLevel ?? 'info', redactor });
  const file = options.file;
  const collection = await loadTools(file, options.env ? { env: options.env } : {});
  redactor.add(
    collectServerSecrets({
      env: { ...process.env, ...options.env },
      collection,
      tokens: options.tokens ?? [],
      credentials: credentials.secrets,
      secretEnv: options.secrets ?? [],
      publicEnv: options.publicEnv ?? [],
      urls: { db: options.db },
    }),
  );
  const runner: ToolRunner = createToolRunner(collection, {
    ...(options.env && { env: options.env }),
    redactor,
  });
  const publicEnv = options.publicEnv ?? [];
  const secretsByTool = new Map(runner.list().map(({ name, env }) => [name, secretsOfTool(env, publicEnv)]));
  const withSecrets = <T extends { name: string }>(tool: T) => {
    const secrets = secretsByTool.get(tool.name) ?? [];
    return secrets.length > 0 ? { ...tool, secrets } : tool;
  };
  const tools = runner.list().map(({ env: _env, ...tool }) => withSecrets(tool));
  const exposedTools = collection.list().map(withSecrets);
  // One search index for the tool file: runs (tools.search) and MCP sessions (search_tools) share it.
  const catalog = createToolCatalog(exposedTools);
  let store: Awaited<ReturnType<typeof openServerStore>>;
  try {
    store = await openServerStore(options.db, logger, {
      ...(options.node !== undefined && { node: options.node }),
      ...(options.cluster !== undefined && { cluster: options.cluster }),
      ...(options.nodeLeaseMs !== undefined && { nodeLeaseMs: options.nodeLeaseMs }),
      ...(options.onLeaseLost && { onLeaseLost: options.onLeaseLost }),
    });
  } catch (error) {
    await runner.close();
    throw error;
  }
  // Approvals live in the process database, or in memory without one.
  const approvalDb = store ? undefined : await openDatabase(':memory:');
  let approvals: Approvals;
  try {
    approvals = await Approvals.open({
      store: store ? new ApprovalStore(store.tables.db, store.engine) : new ApprovalStore(approvalDb!.kysely),
      tools: collection.list(),
      rules: options.policies ?? [],
      ...(options.approvalTimeoutMs !== undefined && { timeoutMs: options.approvalTimeoutMs }),
      credentials,
      redactor,
      logger,
    });
  } catch (error) {
    await store?.close().catch(() => {});
    approvalDb?.close();
    await runner.close();
    throw error;
  }
  // Sessions and state live in the process database, or in memory without one.
  const stateLimits = { valueBytes: limits.stateValueBytes, sessionBytes: limits.stateSessionBytes };
  const sessionStore = store
    ? new SessionStore(store.tables.db, store.engine, stateLimits)
    : await SessionStore.inMemory(stateLimits);
  const ownPool = options.pool === undefined;
  const pool =
    options.pool ??
    createSandboxPool({
      maxWorkerRssMb: limits.maxWorkerRssMb,
      ...(options.concurrency !== undefined && { size: options.concurrency }),
      ...(options.allowNet !== undefined && { allowNet: options.allowNet }),
      ...(options.isolation !== undefined && { isolation: options.isolation }),
    });
  const checkMode = options.check ?? 'block';
  // A warm compiler in a worker thread; without a check there is nothing to start.
  const checker = checkMode === 'off' ? undefined : createChecker({ declarations: checkDeclarations(tools) });
  // Skills are checked at save by that compiler, or (check off) by one started at the first save.
  let skillChecker: Checker | undefined;
  const skillStore = store ? new SkillStore(store.tables.db) : await SkillStore.inMemory();
  const skills = new Skills({
    store: skillStore,
    checker: () => {
      if (checker) return checker;
      skillChecker ??= createChecker({ declarations: checkDeclarations(tools) });
      return skillChecker;
    },
    maxCodeBytes: limits.maxCodeBytes,
  });
  // The in-memory databases and the skills' own checker, released when a start fails or the server closes.
  const releaseStores = async () => {
    approvalDb?.close();
    sessionStore.close();
    skillStore.close();
    await skillChecker?.close();
  };
  let manager: ProcessManager;
  try {
    manager = await createProcessManager({
      pool,
      tools: withCatalog(runner, catalog),
      approvals,
      maxQueue: options.maxQueue ?? 1000,
      maxQueuedPerPrincipal:
        options.maxQueuedPerPrincipal ??
        (authenticator.required
          ? Math.max(1, Math.floor((options.maxQueue ?? 1000) / 2))
          : (options.maxQueue ?? 1000)),
      ...(options.quotas && { quotas: options.quotas }),
      // With tokens, one principal's long runs leave slots for the others.
      ...(authenticator.required && {
        maxRunningPerPrincipal: Math.max(1, Math.ceil((options.concurrency ?? pool.size) / 2)),
      }),
      maxCodeBytes: limits.maxCodeBytes,
      defaults: { timeoutMs: limits.timeoutMs, memoryLimitMb: limits.memoryLimitMb },
      maxima: { timeoutMs: limits.maxTimeoutMs, memoryLimitMb: limits.maxMemoryLimitMb },
      responsePipeBytes: limits.responsePipeBytes,
      maxOpenStreams: limits.maxOpenStreams,
      outputBytesPerSecond: limits.outputBytesPerSecond,
      auditValueBytes: limits.auditValueBytes,
      createIntentStream,
      redactor,
      logger,
      check: checkMode,
      ...(checker && { checker }),
      sessions: processSessions(sessionStore, redactor),
      skillsFor: async (record) => {
        const run = await skills.forRun(record.owner);
        const host = skills.hostFor({ id: record.owner, role: 'client' }, record.pid, run);
        return { host, declarations: run.declarations };
      },
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      ...(store && { store }),
    });
  } catch (error) {
    // Recovery read a damaged store (or an option was bad): release the store, its lock and the pool.
    await store?.close().catch(() => {});
    await releaseStores();
    await checker?.close();
    await runner.close();
    if (ownPool) await pool.close();
    throw store && isCorruption(error) ? corruptError(store.path, error) : error;
  }
  const retention = startServerRetention(store, manager, options.retention, logger);
  // What a start that fails from here on releases: the manager at once, and what it runs on.
  const releaseManager = async () => {
    retention?.stop();
    approvals.close();
    await manager.shutdown({ graceMs: 0 });
    await releaseStores();
    await checker?.close();
    await runner.close();
    if (ownPool) await pool.close();
  };
  let chat: ChatService;
  try {
    chat = await createChatService({
      settings: options.chat ?? {},
      manager,
      tools,
      redactor,
      // Conversations live in the process database, or in memory without one.
      conversations: store ? new ConversationStore(store.tables) : await ConversationStore.inMemory(),
      logger,
      skillDeclarations: (owner) => skills.declarations(owner),
    });
  } catch (error) {
    await releaseManager();
    throw error;
  }
  const chatRetention = startConversationRetention(chat, options.retention, logger);
  const sessionRetention = startSessionRetention(sessionStore, options.retention, logger);
  const sessions = new Sessions(sessionStore, manager, redactor);
  const mcp = createMcpHttp({
    manager,
    tools: exposedTools,
    catalog,
    authenticated: authenticator.required,
    responsePipeBytes: limits.responsePipeBytes,
    logger,
    approvals,
    skills,
  });

  let listener: Listener;
  try {
    listener = await listen({
      manager,
      authenticator,
      tools,
      limits,
      host,
      port: options.port ?? DEFAULT_PORT,
      heartbeatMs: options.heartbeatMs ?? 30_000,
      originPolicy,
      logger,
      chat,
      mcp,
      approvals,
      sessions,
      skills,
      ...(options.consoleUrl !== undefined && { consoleUrl: options.consoleUrl }),
      ...(store && { storeHealth: () => store.health() }),
      ...(store?.nodes && {
        clusterStats: async () => {
          const nodes = store.nodes!;
          return {
            node: nodes.node,
            nodes: await nodes.list(),
            ...(nodes.processes && { processes: await nodes.processes() }),
          };
        },
      }),
    });
  } catch (error) {
    chatRetention?.stop();
    sessionRetention?.stop();
    await chat.close();
    await mcp.close();
    await releaseManager();
    throw error;
  }
  logger.info(
    { url: listener.url, file, tools: runner.list().length, auth: authenticator.required },
    'MCI server listening',
  );

  let closing: Promise<void> | undefined;
  const close = (closeOptions?: { graceMs?: number }) => {
    closing ??= (async () => {
      logger.info('shutting down');
      listener.stopAccepting();
      retention?.stop();
      chatRetention?.stop();
      sessionRetention?.stop();
      await chat.close();
      approvals.close();
      await manager.shutdown({ graceMs: closeOptions?.graceMs ?? options.shutdownGraceMs ?? 10_000 });
      await releaseStores();
      await mcp.close();
      await listener.close(1001);
      await checker?.close();
      await runner.close();
      if (ownPool) await pool.close();
      logger.info('stopped');
    })();
    return closing;
  };
  return {
    url: listener.url,
    wsUrl: listener.wsUrl,
    port: listener.port,
    consoleUrl: options.consoleUrl ?? (isConsoleBuilt() ? `${listener.url}/` : undefined),
    manager,
    close,
    [Symbol.asyncDispose]: () => close(),
  };
}
