import { z } from 'zod';
import { CredentialSchema } from '../approvals/credentials.ts';
import { PolicyRulesSchema } from '../approvals/policy.ts';

const positiveInt = z.number().int().positive();

/** pino's log levels, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** One token of a config file: the secret itself, or the name of an environment variable holding it. */
export const TokenConfigSchema = z
  .strictObject({
    /** The token as callers send it. */
    token: z.string().min(1).optional(),
    /** Read the token from this environment variable instead of writing it in the file. */
    tokenEnv: z.string().min(1).optional(),
    role: z.enum(['client', 'operator']),
    /** The principal id (owner of its processes). @default derived from the token's hash */
    id: z.string().min(1).max(128).optional(),
  })
  .refine((value) => (value.token === undefined) !== (value.tokenEnv === undefined), {
    message: 'give exactly one of token or tokenEnv',
    path: ['token'],
  });
/** @see TokenConfigSchema */
export type TokenConfig = z.infer<typeof TokenConfigSchema>;

/** Size and time limits of the server; every one is configurable. */
export const LimitsSchema = z.strictObject({
  /** Largest program, in UTF-8 bytes. @default 102400 (100 KB) */
  maxCodeBytes: positiveInt.default(100 * 1024),
  /** Largest WebSocket frame, in bytes; bigger ones close the connection with 1009. @default 1048576 */
  maxFrameBytes: positiveInt.default(1024 * 1024),
  /** Largest HTTP request body, in bytes; bigger ones get 413. @default 1048576 */
  maxBodyBytes: positiveInt.default(1024 * 1024),
  /** Bytes a WebSocket may have waiting to be sent before its live events are dropped. @default 4194304 */
  maxBufferedBytes: positiveInt.default(4 * 1024 * 1024),
  /** Timeout of a process that gives none, in ms. @default 30000 */
  timeoutMs: positiveInt.default(30_000),
  /** Largest timeout a process may ask for, in ms (`timeout: null` means this). @default 300000 */
  maxTimeoutMs: positiveInt.default(300_000),
  /** Memory limit of a process that gives none, in MiB. @default 128 */
  memoryLimitMb: positiveInt.default(128),
  /** Largest memory limit a process may ask for, in MiB. @default 1024 */
  maxMemoryLimitMb: positiveInt.default(1024),
  /** Size cap of the response pipe text in `stream.result`, in UTF-8 bytes. @default 16384 */
  responsePipeBytes: positiveInt.default(16 * 1024),
  /** Time a client has to send an HTTP request's headers, in ms; then 408. @default 10000 */
  headersTimeoutMs: positiveInt.default(10_000),
  /** Time a client has to send a whole HTTP request (headers and body), in ms; then 408. @default 30000 */
  requestTimeoutMs: positiveInt.default(30_000),
  /**
   * Most open connections (HTTP and WebSocket); past it a new one may only ask `GET /healthz` (a few
   * such), others are closed at once. @default 1024
   */
  maxConnections: positiveInt.default(1024),
  /** Most open connections from one remote address; past it, as past `maxConnections`. @default 512 */
  maxConnectionsPerAddress: positiveInt.default(512),
  /** Most WebSockets one principal has open; past it the upgrade is refused 429 `LIMIT_EXCEEDED`. @default 256 */
  maxWebSocketsPerPrincipal: positiveInt.default(256),
  /** HTTP requests one principal may make per second; past it 429 `RATE_LIMITED` with `Retry-After`. @default 200 */
  rateLimitPerSecond: positiveInt.default(200),
  /** Open (not ended) streams one principal may hold; past it `LIMIT_EXCEEDED` (idle ones are ended first). @default 64 */
  maxOpenStreams: positiveInt.default(64),
  /**
   * Resident memory of a sandbox worker, in MiB, past which the worker is replaced after its current
   * run (the sandbox pool's `maxWorkerRssMb`). @default 384
   */
  maxWorkerRssMb: positiveInt.default(384),
  /**
   * Bytes of outputs and logs one run may have stored and sent per second (bursts of twice that); past
   * it they are dropped, the run is `truncated` and its stderr says so. @default 1048576
   */
  outputBytesPerSecond: positiveInt.default(1024 * 1024),
  /**
   * Bytes of JSON of a tool call's (or fetch's) input and of its result that the audit keeps
   * (docs/operations.md, "Audit"): a larger input is cut (`inputTruncated`), a larger result is kept
   * as its summary only (`result.truncated`). @default 4096
   */
  auditValueBytes: positiveInt.default(4096),
  /**
   * Bytes of one `state` value (its encoded JSON, docs/sessions.md); a larger `state.set` is refused
   * with `LIMIT_EXCEEDED`. @default 1048576
   */
  stateValueBytes: positiveInt.default(1024 * 1024),
  /**
   * Bytes of every `state` value of one session (or one process without a session) together; a
   * `state.set` past it is refused with `LIMIT_EXCEEDED`. @default 16777216
   */
  stateSessionBytes: positiveInt.default(16 * 1024 * 1024),
});
/** @see LimitsSchema */
export type Limits = z.infer<typeof LimitsSchema>;

/**
 * What one principal may use (docs/operations.md, "Quotas"); an absent field is not limited
 * (`maxRunning` and `maxQueued` then have the server's per-principal defaults).
 */
export const QuotaSchema = z.strictObject({
  /** Runs of the principal running at once; its other processes wait in the queue. */
  maxRunning: positiveInt.optional(),
  /** Processes of the principal waiting in the queue; past it 429 `QUOTA_EXCEEDED`. */
  maxQueued: positiveInt.optional(),
  /** Runs the principal may start per one-minute window; past it 429 `QUOTA_EXCEEDED`. */
  runsPerMinute: positiveInt.optional(),
  /** Sandbox CPU time (ms) the principal's runs may use per one-minute window; past it new runs get 429. */
  cpuMsPerMinute: positiveInt.optional(),
});

/**
 * Quotas of every principal (`default`) and of principals by token id (`principals`, field by field
 * over `default`). An id in `principals` that no token has is a config error.
 */
export const QuotasSchema = z.strictObject({
  default: QuotaSchema.optional(),
  principals: z.record(z.string().min(1).max(128), QuotaSchema).optional(),
});

/**
 * A server config file (`mci serve --config F`, YAML or JSON). Relative paths in it are relative to
 * the file. Environment variables and flags override it. @see docs/server.md
 */
export const ServerConfigFileSchema = z.strictObject({
  /** Address to listen on. @default '127.0.0.1' */
  host: z.string().min(1).optional(),
  /** Port to listen on (0 picks a free one). @default 7687 */
  port: z.number().int().min(0).max(65535).optional(),
  /** The MCI tool file. @default mci.json/yaml/yml in the working directory, else examples/mci.yaml */
  file: z.string().min(1).optional(),
  /** Sandbox workers, and processes run at once. @default number of CPUs */
  concurrency: positiveInt.optional(),
  /**
   * How sandbox runs are kept apart: `context`, one isolate per principal in each worker with a fresh
   * context per run; `isolate`, a fresh isolate per run (docs/sandbox.md, "Isolation"). @default 'context'
   */
  isolation: z.enum(['context', 'isolate']).optional(),
  /**
   * The check of each program before it runs (docs/sandbox.md, "Check before running"): `block`,
   * `warn` or `off`; a process may give its own. @default 'block'
   */
  check: z.enum(['block', 'warn', 'off']).optional(),
  /** Most queued processes; past it creation fails with 429 QUEUE_FULL. @default 1000 */
  maxQueue: positiveInt.optional(),
  /**
   * Most queued processes of one principal; past it its creates fail with 429 QUOTA_EXCEEDED. The
   * default of `quotas.default.maxQueued`.
   * @default maxQueue / 2 with tokens, maxQueue without (every caller is one principal)
   */
  maxQueuedPerPrincipal: positiveInt.optional(),
  /** Quotas per principal: runs at once, queued, runs and sandbox CPU ms per minute (docs/operations.md). */
  quotas: QuotasSchema.optional(),
  /** Hosts (`HOST` or `HOST:PORT`) sandboxed `fetch` may reach even when private or loopback. */
  allowNet: z.array(z.string().min(1)).optional(),
  /** Allow binding a non-loopback address without tokens. @default false */
  insecure: z.boolean().optional(),
  tokens: z.array(TokenConfigSchema).optional(),
  /**
   * Browser pages allowed to call the server. `origins`: `scheme://host[:port]`, `:*` for any port,
   * or `*` (only without tokens). @default without tokens: `http://localhost:*` and `http://127.0.0.1:*`
   */
  cors: z.strictObject({ origins: z.array(z.string().min(1)) }).optional(),
  /** URLs the server is reached at through a proxy: their hosts are accepted in `Host`. */
  publicUrls: z.array(z.url()).optional(),
  limits: LimitsSchema.partial().optional(),
  /** Interval of WebSocket pings, in ms; a connection that misses one is closed. @default 30000 */
  heartbeatMs: positiveInt.optional(),
  /** How long running processes may finish on shutdown, in ms. @default 10000 */
  shutdownGraceMs: z.number().int().nonnegative().optional(),
  /** pino log level. @default 'info' */
  logLevel: z.enum(LOG_LEVELS).optional(),
  /**
   * Policy rules for tool calls and `fetch`, first match wins (docs/approvals.md): the initial rules,
   * until an operator sets others over `PUT /policies`.
   */
  policies: PolicyRulesSchema.optional(),
  /**
   * Credentials the host adds to the sandbox's `fetch` by destination, values rendered from the
   * environment (`Bearer {{env.GITHUB_TOKEN}}`); the program never sees them (docs/security.md).
   */
  credentials: z.array(CredentialSchema).optional(),
  /**
   * More environment variables whose values are secrets: redacted (`[redacted:NAME]`) from everything
   * the server stores or sends, like every `{{env.X}}` a tool reads (docs/security.md).
   */
  secrets: z.array(z.string().min(1)).optional(),
  /** Environment variables tools read through `{{env.X}}` that are not secrets (URLs, regions). */
  publicEnv: z.array(z.string().min(1)).optional(),
  approvals: z
    .strictObject({
      /** How long an approval waits for a decision before it expires, in ms. @default 600000 */
      timeoutMs: positiveInt.optional(),
    })
    .optional(),
});
/** @see ServerConfigFileSchema */
export type ServerConfigFile = z.infer<typeof ServerConfigFileSchema>;
