import { MIN_SECRET_LENGTH, type Secret, secretsOfUrl, type ToolCollection } from '@mci/schema';
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
