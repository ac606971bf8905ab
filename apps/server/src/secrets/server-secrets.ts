import type { ToolHost } from '@mci/sandbox';
import { MIN_SECRET_LENGTH, Redactor, type Secret, secretsOfUrl, type ToolCollection } from '@mci/schema';
import { collectEnvUsage, type ToolEnvVariable } from '@mci/tools/env-usage';
import type { TokenGrant } from '../auth/authenticator.ts';
import { ConfigError } from '../config/config-error.ts';

/** Where a server's secret values come from (docs/security.md). */
export interface SecretSources {
  /** The environment tool templates and credentials are rendered from. */
  env: Record<string, string | undefined>;
  /** The tool file: every `{{env.X}}` a tool (or its MCP server) reads is a secret. */
  collection: ToolCollection;
  /** The bearer tokens callers send. */
  tokens?: readonly TokenGrant[];
  /** The values the credentials inject. */
  credentials?: readonly Secret[];
  /** More environment variables whose values are secrets (the config's `secrets:`). */
  secretEnv?: readonly string[];
  /** Environment variables tools read that are not secrets (the config's `publicEnv:`). */
  publicEnv?: readonly string[];
  /** URLs whose credentials (`user:pass@`, `?api_key=`) are secrets, by setting name (`db`). */
  urls?: Readonly<Record<string, string | undefined>>;
}

/**
 * The secret values of a server: what every tool reads through `{{env.X}}` (unless listed in
 * `publicEnv`), the credentials' values, the tokens, the variables listed in `secrets`, and credentials
 * written in URLs. Unset variables have no value and are skipped.
 * @throws ConfigError `CONFIG_INVALID` naming the value's source and variable when a value is shorter
 * than {@link MIN_SECRET_LENGTH} characters (too short to tell apart from ordinary text).
 */
export function collectServerSecrets(sources: SecretSources): Secret[] {
  const { env } = sources;
  const publicEnv = new Set(sources.publicEnv ?? []);
  const secrets: Secret[] = [];
  const add = (name: string, value: string | undefined, where: string, path: string, hint: string) => {
    if (value === undefined || value === '') return;
    if (value.length < MIN_SECRET_LENGTH)
      throw new ConfigError(
        'CONFIG_INVALID',
        `${where}: the value of ${name} has ${value.length} characters; a secret needs at least ${MIN_SECRET_LENGTH} to be redacted safely. ${hint}`,
        { path },
      );
    secrets.push({ name, value });
  };
  const { variables } = collectEnvUsage(sources.collection, env);
  for (const variable of variables) {
    if (publicEnv.has(variable.name)) continue;
    const use = variable.usedIn[0]!;
    add(
      variable.name,
      env[variable.name],
      `${use.field} reads {{env.${variable.name}}}`,
      'publicEnv',
      `If it is not a secret, list ${variable.name} under publicEnv in the server config (or MCI_PUBLIC_ENV).`,
    );
  }
  for (const [index, name] of (sources.secretEnv ?? []).entries())
    add(name, env[name], `secrets[${index}]`, `secrets[${index}]`, 'Use a longer value.');
  for (const secret of sources.credentials ?? []) secrets.push(secret);
  for (const [index, grant] of (sources.tokens ?? []).entries())
    add(
      `token:${grant.id ?? grant.role}`,
      grant.token,
      `tokens[${index}]`,
      `tokens[${index}]`,
      'Use a longer token (32 random characters or more).',
    );
  for (const [name, url] of Object.entries(sources.urls ?? {}))
    if (url !== undefined) secrets.push(...secretsOfUrl(url, name));
  return secrets;
}

/**
 * A tool's `env` listing as the server shows it: the variables that are secrets (not in
 * `publicEnv`), by name, with whether each is set.
 */
export function secretsOfTool(
  env: readonly ToolEnvVariable[] | undefined,
  publicEnv: readonly string[] = [],
): ToolEnvVariable[] {
  return (env ?? []).filter(({ name }) => !publicEnv.includes(name));
}

/**
 * The secrets of a local command (`mci run`, `mci mcp`): what the tools read through `{{env.X}}`, and
 * the variables of `MCI_SECRETS`, except those of `MCI_PUBLIC_ENV`.
 * @throws ConfigError for a secret value shorter than {@link MIN_SECRET_LENGTH}.
 */
export function localRedactor(collection: ToolCollection, env: Record<string, string | undefined>): Redactor {
  const list = (name: string) =>
    (env[name] ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  return new Redactor(
    collectServerSecrets({
      env,
      collection,
      secretEnv: list('MCI_SECRETS'),
      publicEnv: list('MCI_PUBLIC_ENV'),
    }),
  );
}

/** `act`, with its rejection's message (and the sandbox error it becomes) redacted. */
export async function redactedCall<T>(redactor: Redactor | undefined, act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (error) {
    if (!redactor || !(error instanceof Error)) throw error;
    const message = redactor.redact(error.message);
    if (message === error.message) throw error;
    const code = (error as { code?: unknown }).code;
    throw Object.assign(new Error(message), { name: error.name, ...(typeof code === 'string' && { code }) });
  }
}

/** `host` with every result (and error message) redacted before it reaches the sandbox. */
export function redactingTools(host: ToolHost, redactor: Redactor): ToolHost {
  return {
    list: () => host.list(),
    execute: (name, props, options) =>
      redactedCall(redactor, async () => redactor.redactValue(await host.execute(name, props, options))),
    ...(host.catalog && { catalog: host.catalog }),
  };
}
