import { ConfigError } from './config-error.ts';

/**
 * The one reader of settings given as text: environment variables and numeric command-line options.
 * Every rule throws a {@link ConfigError} (`CONFIG_INVALID`, `path` = the setting's name) whose
 * message names the setting and what it accepts; the CLI shows that message as a usage error.
 */

/** What a numeric setting accepts. */
export interface NumberRule {
  /** Whole numbers only. @default true */
  integer?: boolean;
  /** Smallest accepted value (inclusive). @default 1 */
  min?: number;
  /** Largest accepted value (inclusive). @default Number.MAX_SAFE_INTEGER */
  max?: number;
  /** For `min: 0` with fractions: refuse 0 itself ("a positive number"). @default false */
  positive?: boolean;
}

/** Environment variables as `process.env` holds them. */
export type Env = Readonly<Record<string, string | undefined>>;

function expected(rule: NumberRule): string {
  const min = rule.min ?? 1;
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  if (rule.integer === false) return rule.positive || min > 0 ? 'a positive number' : `a number from ${min}`;
  if (min === 1 && max === Number.MAX_SAFE_INTEGER) return 'a positive integer';
  if (max === Number.MAX_SAFE_INTEGER) return `an integer from ${min}`;
  return `an integer from ${min} to ${max}`;
}

function toNumber(raw: string, rule: NumberRule): number | undefined {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  const ok =
    Number.isFinite(value) &&
    (rule.integer === false || Number.isSafeInteger(value)) &&
    value >= (rule.min ?? 1) &&
    value <= (rule.max ?? Number.MAX_SAFE_INTEGER) &&
    !(rule.positive && value <= 0);
  return ok ? value : undefined;
}

/**
 * Parses a flag's text as a number under `rule`.
 * @param name the flag as the user wrote it (`--port`), used in the message
 * @throws ConfigError `CONFIG_INVALID`: `--port must be an integer from 0 to 65535, got "x"`
 */
export function parseNumberSetting(raw: string, name: string, rule: NumberRule = {}): number {
  const value = toNumber(raw, rule);
  if (value === undefined) {
    throw new ConfigError('CONFIG_INVALID', `${name} must be ${expected(rule)}, got ${JSON.stringify(raw)}`, {
      path: name,
    });
  }
  return value;
}

/** The value of an environment variable; an empty one counts as unset. */
export function readEnv(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The first of `names` that is set (not empty), e.g. `MCI_TOKEN` then `MCI_API_KEY`. */
export function readFirstEnv(env: Env, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = readEnv(env, name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * A numeric environment variable (unset or empty: `undefined`).
 * @throws ConfigError `CONFIG_INVALID`: `MCI_PORT=x: expected an integer from 0 to 65535`
 */
export function readEnvNumber(env: Env, name: string, rule: NumberRule = {}): number | undefined {
  const raw = readEnv(env, name);
  if (raw === undefined) return undefined;
  const value = toNumber(raw, rule);
  if (value === undefined) {
    throw new ConfigError('CONFIG_INVALID', `${name}=${raw}: expected ${expected(rule)}`, { path: name });
  }
  return value;
}

/** A comma-separated list (items trimmed, empty items dropped). */
export function readEnvList(env: Env, name: string): string[] | undefined {
  const raw = readEnv(env, name);
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** A yes/no variable: `1`/`true` (any case) are yes, anything else set is no. */
export function readEnvBoolean(env: Env, name: string): boolean | undefined {
  const raw = readEnv(env, name);
  return raw === undefined ? undefined : raw === '1' || raw.toLowerCase() === 'true';
}

/** A variable restricted to `choices`. @throws ConfigError naming the variable and the choices */
export function readEnvChoice<const T extends string>(
  env: Env,
  name: string,
  choices: readonly T[],
): T | undefined {
  const raw = readEnv(env, name);
  if (raw === undefined) return undefined;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError('CONFIG_INVALID', `${name}=${raw}: expected one of ${choices.join(', ')}`, {
      path: name,
    });
  }
  return raw as T;
}
