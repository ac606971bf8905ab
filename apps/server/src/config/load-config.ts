import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describeValidationIssues, formatJsonPath, formatZodIssues, type ZodIssue } from '@mci/protocol';
import { parse as parseYaml } from 'yaml';
import type { TokenGrant } from '../auth/authenticator.ts';
import { ConfigError } from './config-error.ts';
import {
  type Limits,
  LimitsSchema,
  LOG_LEVELS,
  type ServerConfigFile,
  ServerConfigFileSchema,
} from './config-schema.ts';
import {
  type Env,
  readEnv,
  readEnvBoolean,
  readEnvChoice,
  readEnvList,
  readEnvNumber,
} from './read-setting.ts';

/** The settings of one server, resolved from defaults, config file, environment and flags (in that order). */
export interface ServerSettings {
  host: string;
  port: number;
  /** Absolute path of the tool file, when one was given (else the CLI picks the default). */
  file: string | undefined;
  concurrency: number | undefined;
  /** How sandbox runs are kept apart (docs/sandbox.md, "Isolation"). */
  isolation: 'context' | 'isolate';
  /** The check before each run, for processes that give none (docs/sandbox.md). */
  check: 'block' | 'warn' | 'off';
  maxQueue: number;
  /** Most queued processes of one principal (default half of `maxQueue`). */
  maxQueuedPerPrincipal: number | undefined;
  /** Quotas per principal (docs/operations.md, "Quotas"). */
  quotas: ServerConfigFile['quotas'];
  allowNet: string[];
  insecure: boolean;
  /** Page origins allowed by CORS; `undefined` for the default (see `createOriginPolicy`). */
  corsOrigins: string[] | undefined;
  /** URLs the server is reached at through a proxy. */
  publicUrls: string[];
  /** A web console served elsewhere that page loads are redirected to (`MCI_CONSOLE_URL`). */
  consoleUrl: string | undefined;
  tokens: TokenGrant[];
  limits: Limits;
  heartbeatMs: number;
  shutdownGraceMs: number;
  logLevel: NonNullable<ServerConfigFile['logLevel']>;
  /** The config file's policy rules (docs/approvals.md). */
  policies: NonNullable<ServerConfigFile['policies']>;
  /** How long an approval waits for a decision, in ms. */
  approvalTimeoutMs: number | undefined;
  /** Credentials the host adds to the sandbox's `fetch`. */
  credentials: NonNullable<ServerConfigFile['credentials']>;
  /** Environment variables whose values are secrets, beyond those tools read. */
  secrets: string[];
  /** Environment variables tools read that are not secrets. */
  publicEnv: string[];
}

/** Flags of `mci serve` (all optional; they win over environment and file). */
export type ServerFlags = Partial<
  Pick<
    ServerSettings,
    | 'host'
    | 'port'
    | 'file'
    | 'concurrency'
    | 'isolation'
    | 'check'
    | 'maxQueue'
    | 'allowNet'
    | 'insecure'
    | 'logLevel'
  >
> & { config?: string; corsOrigin?: string[]; publicUrl?: string[] };

/** Default port of MCI Server. */
export const DEFAULT_PORT = 7687;

/**
 * Resolves the server settings. Environment: `MCI_CONFIG`, `MCI_HOST`, `MCI_PORT`, `MCI_FILE`,
 * `MCI_CONCURRENCY`, `MCI_ISOLATION` (`context` or `isolate`), `MCI_CHECK` (`block`, `warn` or `off`), `MCI_MAX_QUEUE`, `MCI_ALLOW_NET` (comma-separated), `MCI_INSECURE` (`1`/`true`),
 * `MCI_LOG_LEVEL`, `MCI_API_KEY` (an operator token), `MCI_CLIENT_TOKENS` (comma-separated `token` or
 * `id=token`), `MCI_SECRETS` and `MCI_PUBLIC_ENV` (comma-separated variable names). Tokens, secrets
 * and public variables from all sources add up. `MCI_CONSOLE_URL`: a console served elsewhere (`pnpm dev`).
 * @throws ConfigError naming the file and field, or the variable, at fault.
 */
export function loadServerSettings(
  flags: ServerFlags = {},
  env: Env = process.env,
  cwd = process.cwd(),
): ServerSettings {
  const configPath = flags.config ?? readEnv(env, 'MCI_CONFIG');
  const file = configPath
    ? readConfigFile(resolve(cwd, configPath), env)
    : { config: {} as ServerConfigFile, tokens: [], dir: cwd };
  const { config } = file;
  const fromEnv = readEnvSettings(env);
  const limits = LimitsSchema.parse(config.limits ?? {});
  const pick = <T>(...values: Array<T | undefined>): T | undefined =>
    values.find((value) => value !== undefined);
  const toolFile = pick(
    flags.file && resolve(cwd, flags.file),
    fromEnv.file && resolve(cwd, fromEnv.file),
    config.file && resolve(file.dir, config.file),
  );
  return {
    host: pick(flags.host, fromEnv.host, config.host) ?? '127.0.0.1',
    port: pick(flags.port, fromEnv.port, config.port) ?? DEFAULT_PORT,
    file: toolFile,
    concurrency: pick(flags.concurrency, fromEnv.concurrency, config.concurrency),
    isolation: pick(flags.isolation, fromEnv.isolation, config.isolation) ?? 'context',
    check: pick(flags.check, fromEnv.check, config.check) ?? 'block',
    maxQueue: pick(flags.maxQueue, fromEnv.maxQueue, config.maxQueue) ?? 1000,
    maxQueuedPerPrincipal: config.maxQueuedPerPrincipal,
    quotas: config.quotas,
    allowNet: [...(config.allowNet ?? []), ...(fromEnv.allowNet ?? []), ...(flags.allowNet ?? [])],
    insecure: pick(flags.insecure || undefined, fromEnv.insecure, config.insecure) ?? false,
    corsOrigins: pick(flags.corsOrigin, config.cors?.origins),
    publicUrls: [...(config.publicUrls ?? []), ...(flags.publicUrl ?? [])],
    consoleUrl: fromEnv.consoleUrl,
    tokens: [...file.tokens, ...fromEnv.tokens],
    limits,
    heartbeatMs: config.heartbeatMs ?? 30_000,
    shutdownGraceMs: config.shutdownGraceMs ?? 10_000,
    logLevel: pick(flags.logLevel, fromEnv.logLevel, config.logLevel) ?? 'info',
    policies: config.policies ?? [],
    approvalTimeoutMs: config.approvals?.timeoutMs,
    credentials: config.credentials ?? [],
    secrets: [...(config.secrets ?? []), ...(fromEnv.secrets ?? [])],
    publicEnv: [...(config.publicEnv ?? []), ...(fromEnv.publicEnv ?? [])],
  };
}

function readConfigFile(
  path: string,
  env: Env,
): { config: ServerConfigFile; tokens: TokenGrant[]; dir: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'CONFIG_NOT_FOUND',
      `cannot read config file ${path}: ${(error as Error).message}`,
      { file: path, cause: error },
    );
  }
  let data: unknown;
  try {
    data = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      'CONFIG_INVALID',
      `${path}: not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
      {
        file: path,
        cause: error,
      },
    );
  }
  const parsed = ServerConfigFileSchema.safeParse(data ?? {}, { reportInput: true });
  if (!parsed.success) throw fromIssues(parsed.error.issues, path);
  const tokens = (parsed.data.tokens ?? []).map((entry, index): TokenGrant => {
    const token = entry.token ?? readEnv(env, entry.tokenEnv ?? '');
    if (!token) {
      const field = formatJsonPath(['tokens', index, 'tokenEnv']);
      throw new ConfigError(
        'CONFIG_INVALID',
        `${path}: ${field}: environment variable ${entry.tokenEnv} is not set`,
        { file: path, path: field },
      );
    }
    return { token, role: entry.role, ...(entry.id ? { id: entry.id } : {}) };
  });
  return { config: parsed.data, tokens, dir: dirname(path) };
}

function fromIssues(issues: readonly ZodIssue[], file: string): ConfigError {
  const problems = formatZodIssues(issues);
  const first = problems[0];
  return new ConfigError('CONFIG_INVALID', `${file}: ${describeValidationIssues(problems)}`, {
    file,
    ...(first ? { path: first.path } : {}),
  });
}

interface EnvSettings {
  consoleUrl: string | undefined;
  host: string | undefined;
  port: number | undefined;
  file: string | undefined;
  concurrency: number | undefined;
  isolation: ServerSettings['isolation'] | undefined;
  check: ServerSettings['check'] | undefined;
  maxQueue: number | undefined;
  allowNet: string[] | undefined;
  insecure: boolean | undefined;
  logLevel: ServerSettings['logLevel'] | undefined;
  tokens: TokenGrant[];
  secrets: string[] | undefined;
  publicEnv: string[] | undefined;
}

function readEnvSettings(env: Env): EnvSettings {
  const tokens: TokenGrant[] = [];
  const apiKey = readEnv(env, 'MCI_API_KEY');
  if (apiKey) tokens.push({ token: apiKey, role: 'operator', id: 'operator' });
  for (const item of readEnvList(env, 'MCI_CLIENT_TOKENS') ?? []) {
    const eq = item.indexOf('=');
    tokens.push(
      eq > 0
        ? { token: item.slice(eq + 1), role: 'client', id: item.slice(0, eq) }
        : { token: item, role: 'client' },
    );
  }
  return {
    host: readEnv(env, 'MCI_HOST'),
    port: readEnvNumber(env, 'MCI_PORT', { min: 0, max: 65535 }),
    file: readEnv(env, 'MCI_FILE'),
    concurrency: readEnvNumber(env, 'MCI_CONCURRENCY'),
    isolation: readEnvChoice(env, 'MCI_ISOLATION', ['context', 'isolate'] as const),
    check: readEnvChoice(env, 'MCI_CHECK', ['block', 'warn', 'off'] as const),
    maxQueue: readEnvNumber(env, 'MCI_MAX_QUEUE'),
    allowNet: readEnvList(env, 'MCI_ALLOW_NET'),
    insecure: readEnvBoolean(env, 'MCI_INSECURE'),
    logLevel: readEnvChoice(env, 'MCI_LOG_LEVEL', LOG_LEVELS),
    tokens,
    secrets: readEnvList(env, 'MCI_SECRETS'),
    publicEnv: readEnvList(env, 'MCI_PUBLIC_ENV'),
    consoleUrl: readConsoleUrl(env),
  };
}

/** `MCI_CONSOLE_URL`: an http(s) URL, or a `CONFIG_INVALID` error naming the variable. */
function readConsoleUrl(env: Env): string | undefined {
  const raw = readEnv(env, 'MCI_CONSOLE_URL');
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) {
    const message = `MCI_CONSOLE_URL must be an http(s) URL, got ${JSON.stringify(raw)}`;
    throw new ConfigError('CONFIG_INVALID', message, { path: 'MCI_CONSOLE_URL' });
  }
  return raw;
}
