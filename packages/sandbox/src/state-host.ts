/**
 * The durable key-value state a program reaches as the `state` global (docs/sessions.md): the host
 * keeps it (the server: per session, in its database). Arguments are checked by the sandbox
 * ({@link stateCall}) before they reach it. A method that throws rejects the program's call; an error
 * with a string `code` (`VERSION_CONFLICT`, `LIMIT_EXCEEDED`) gives the program's error that `code`.
 */
export interface StateHost {
  /** The value and version of `key`; `undefined` when it is absent or expired. */
  get(key: string): Promise<{ value: unknown; version: number } | undefined>;
  /** Writes `key` (durable and visible to other runs when it resolves); resolves with its new version. */
  set(key: string, value: unknown, options: StateSetOptions): Promise<{ version: number }>;
  /** Deletes `key`; true when it was there. */
  delete(key: string): Promise<boolean>;
  /** The keys that start with `prefix`, in order. */
  keys(prefix: string): Promise<string[]>;
}

/** Options of `state.set`. */
export interface StateSetOptions {
  /** The entry expires this many ms after the write. @default never */
  ttlMs?: number;
  /** Write only if the key is at this version (0: absent), else reject with `VERSION_CONFLICT`. */
  ifVersion?: number;
}

/** Most characters of a state key (and of a `state.keys` prefix). */
export const MAX_STATE_KEY_LENGTH = 256;

/** The longest `ttlMs` (a year). */
export const MAX_STATE_TTL_MS = 365 * 24 * 3_600_000;

/** A `state` call, as the program made it. */
export type StateOp = 'get' | 'set' | 'delete' | 'keys';

/**
 * What is wrong with a state key (a string of 1 to {@link MAX_STATE_KEY_LENGTH} characters without
 * control characters), or `undefined` for a good one.
 */
export function stateKeyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return `the key must be a string, got ${describe(key)}`;
  if (key.length === 0) return 'the key must not be empty';
  if (key.length > MAX_STATE_KEY_LENGTH)
    return `the key is ${key.length} characters long; at most ${MAX_STATE_KEY_LENGTH}`;
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'the key must not contain control characters';
  return undefined;
}

/**
 * Checks the arguments of a `state` call (as the program passed them; nothing from the sandbox is
 * trusted) and makes it on `host`. `get` answers the value, or `{ value, version }` with
 * `{ withVersion: true }` (version 0 for an absent key).
 * @throws TypeError or RangeError (`state.set: ...`) for bad arguments; what `host` throws.
 */
export async function stateCall(host: StateHost, op: StateOp, args: readonly unknown[]): Promise<unknown> {
  const fail = (message: string, Type: ErrorConstructor = TypeError): never => {
    throw new Type(`state.${op}: ${message}`);
  };
  const key = op === 'keys' ? undefined : args[0];
  const problem = op === 'keys' ? undefined : stateKeyProblem(key);
  if (problem) fail(problem);
  switch (op) {
    case 'get': {
      const options = optionsOf(args[1], ['withVersion'], fail);
      if (options.withVersion !== undefined && typeof options.withVersion !== 'boolean')
        fail(`withVersion must be a boolean, got ${describe(options.withVersion)}`);
      const found = await host.get(key as string);
      return options.withVersion ? (found ?? { value: undefined, version: 0 }) : found?.value;
    }
    case 'set': {
      if (args.length < 2) fail('a value is required (state.delete(key) removes a key)');
      const options = optionsOf(args[2], ['ttlMs', 'ifVersion'], fail);
      const { ttlMs, ifVersion } = options;
      if (
        ttlMs !== undefined &&
        (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_STATE_TTL_MS)
      )
        fail(
          `ttlMs must be an integer from 1 to ${MAX_STATE_TTL_MS} (ms), got ${describe(ttlMs)}`,
          RangeError,
        );
      if (
        ifVersion !== undefined &&
        (typeof ifVersion !== 'number' || !Number.isSafeInteger(ifVersion) || ifVersion < 0)
      )
        fail(
          `ifVersion must be a version from state.get(key, { withVersion: true }) (an integer >= 0), got ${describe(ifVersion)}`,
          RangeError,
        );
      return host.set(key as string, args[1], {
        ...(ttlMs !== undefined && { ttlMs: ttlMs as number }),
        ...(ifVersion !== undefined && { ifVersion: ifVersion as number }),
      });
    }
    case 'delete':
      return host.delete(key as string);
    case 'keys': {
      const prefix = args[0] ?? '';
      if (typeof prefix !== 'string') fail(`the prefix must be a string, got ${describe(prefix)}`);
      if ((prefix as string).length > MAX_STATE_KEY_LENGTH)
        fail(`the prefix is longer than ${MAX_STATE_KEY_LENGTH} characters`);
      return host.keys(prefix as string);
    }
    default:
      return fail('unknown operation');
  }
}

function optionsOf(
  value: unknown,
  known: readonly string[],
  fail: (message: string) => never,
): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail(`options must be an object, got ${describe(value)}`);
  for (const name of Object.keys(value))
    if (!known.includes(name)) fail(`unknown option "${name}" (known: ${known.join(', ')})`);
  return value as Record<string, unknown>;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return typeof value;
}
