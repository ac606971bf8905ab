import { ServerError } from './server-error.ts';

/** The limits a process runs with, after defaults and clamping. */
export interface EffectiveLimits {
  timeoutMs: number;
  memoryLimitMb: number;
}

/** Server-wide limits: what a process gets by default and the most it may ask for. */
export interface LimitPolicy {
  defaults: EffectiveLimits;
  maxima: EffectiveLimits;
  maxCodeBytes: number;
}

/** Languages a process may be written in (TypeScript types are stripped; JavaScript runs as is). */
export const PROCESS_LANGS = ['ts', 'typescript', 'js', 'javascript'] as const;

/** Smallest memory limit a sandbox isolate accepts, in MiB. */
export const MIN_MEMORY_LIMIT_MB = 8;

/** Longest `ref`, in characters (after trimming). */
export const MAX_REF_LENGTH = 256;

const positiveInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/**
 * Builds the policy from manager options, checking them (a bad option is a programming or
 * configuration error: `RangeError` naming the option). Defaults are clamped to the maxima.
 */
export function createLimitPolicy(options: {
  defaults?: Partial<EffectiveLimits>;
  maxima?: Partial<EffectiveLimits>;
  maxCodeBytes?: number;
}): LimitPolicy {
  const maxima = {
    timeoutMs: checkOption('maxima.timeoutMs', options.maxima?.timeoutMs, 300_000),
    memoryLimitMb: checkOption('maxima.memoryLimitMb', options.maxima?.memoryLimitMb, 1024),
  };
  const defaults = {
    timeoutMs: Math.min(
      checkOption('defaults.timeoutMs', options.defaults?.timeoutMs, 30_000),
      maxima.timeoutMs,
    ),
    memoryLimitMb: Math.min(
      checkOption('defaults.memoryLimitMb', options.defaults?.memoryLimitMb, 128),
      maxima.memoryLimitMb,
    ),
  };
  return { defaults, maxima, maxCodeBytes: checkOption('maxCodeBytes', options.maxCodeBytes, 100 * 1024) };
}

/** `value` if it is a positive integer, `fallback` if undefined. @throws RangeError naming the option. */
export function checkOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!positiveInteger(value))
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * The limits of one process: `timeoutMs` (positive integer ms; `null` = the server maximum) and
 * `memoryLimitMb` (integer MiB, at least {@link MIN_MEMORY_LIMIT_MB}), each defaulted and clamped to the maxima.
 * @throws ServerError `VALIDATION` with `path` naming the bad field.
 */
export function resolveLimits(
  policy: LimitPolicy,
  input: { timeoutMs?: number | null; memoryLimitMb?: number },
): EffectiveLimits {
  let timeoutMs = policy.defaults.timeoutMs;
  if (input.timeoutMs === null) timeoutMs = policy.maxima.timeoutMs;
  else if (input.timeoutMs !== undefined) {
    if (!positiveInteger(input.timeoutMs)) {
      throw new ServerError(
        'VALIDATION',
        `timeoutMs must be a positive integer (ms) or null, got ${String(input.timeoutMs)}`,
        {
          path: 'timeoutMs',
        },
      );
    }
    timeoutMs = Math.min(input.timeoutMs, policy.maxima.timeoutMs);
  }
  let memoryLimitMb = policy.defaults.memoryLimitMb;
  if (input.memoryLimitMb !== undefined) {
    if (!positiveInteger(input.memoryLimitMb) || input.memoryLimitMb < MIN_MEMORY_LIMIT_MB) {
      throw new ServerError(
        'VALIDATION',
        `memoryLimitMb must be an integer >= ${MIN_MEMORY_LIMIT_MB} (MiB), got ${String(input.memoryLimitMb)}`,
        {
          path: 'memoryLimitMb',
        },
      );
    }
    memoryLimitMb = Math.min(input.memoryLimitMb, policy.maxima.memoryLimitMb);
  }
  return { timeoutMs, memoryLimitMb };
}

/**
 * A client label: trimmed, 1..256 characters; `undefined` stays undefined.
 * @throws ServerError `VALIDATION` (path `ref`).
 */
export function normalizeRef(ref: unknown): string | undefined {
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string') throw new ServerError('VALIDATION', 'ref must be a string', { path: 'ref' });
  const trimmed = ref.trim();
  if (trimmed === '') throw new ServerError('VALIDATION', 'ref must not be empty', { path: 'ref' });
  if (trimmed.length > MAX_REF_LENGTH) {
    throw new ServerError(
      'VALIDATION',
      `ref must be at most ${MAX_REF_LENGTH} characters, got ${trimmed.length}`,
      {
        path: 'ref',
      },
    );
  }
  return trimmed;
}

/**
 * The language of a process, lower-cased; `ts` when not given.
 * @throws ServerError `VALIDATION` (path `lang`) for anything but ts, typescript, js, javascript.
 */
export function normalizeLang(lang: unknown): string {
  if (lang === undefined) return 'ts';
  const lower = typeof lang === 'string' ? lang.trim().toLowerCase() : '';
  if (!(PROCESS_LANGS as readonly string[]).includes(lower)) {
    throw new ServerError(
      'VALIDATION',
      `lang must be one of ${PROCESS_LANGS.join(', ')}, got ${JSON.stringify(lang)}`,
      {
        path: 'lang',
      },
    );
  }
  return lower;
}

/**
 * Checks the program text and its size in UTF-8 bytes.
 * @throws ServerError `VALIDATION` (not a string) or `CODE_TOO_LARGE` (path `code`).
 */
export function checkCode(policy: LimitPolicy, code: unknown): string {
  if (typeof code !== 'string')
    throw new ServerError('VALIDATION', 'code must be a string', { path: 'code' });
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > policy.maxCodeBytes) {
    throw new ServerError(
      'CODE_TOO_LARGE',
      `code is ${bytes} bytes, over the limit of ${policy.maxCodeBytes} bytes`,
      {
        path: 'code',
      },
    );
  }
  return code;
}

/** Deepest nesting of `metadata` (the metadata object itself is depth 1). */
export const MAX_METADATA_DEPTH = 16;

/** Largest `metadata`, in UTF-8 bytes of its JSON. */
export const MAX_METADATA_BYTES = 16 * 1024;

/**
 * Checks the client metadata of a process: a JSON object nested at most {@link MAX_METADATA_DEPTH}
 * levels and at most {@link MAX_METADATA_BYTES} bytes as JSON. The depth is measured without
 * recursion, so a hostile nesting cannot overflow the stack.
 * @throws ServerError `VALIDATION` (path `metadata`) naming the limit.
 */
export function checkMetadata(metadata: unknown): void {
  if (metadata === undefined) return;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    throw new ServerError('VALIDATION', 'metadata must be a JSON object', { path: 'metadata' });
  const stack: Array<{ value: object; depth: number }> = [{ value: metadata, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (depth > MAX_METADATA_DEPTH) {
      throw new ServerError(
        'VALIDATION',
        `metadata is nested deeper than the limit of ${MAX_METADATA_DEPTH} levels`,
        { path: 'metadata' },
      );
    }
    for (const item of Object.values(value))
      if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: depth + 1 });
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > MAX_METADATA_BYTES) {
    throw new ServerError(
      'VALIDATION',
      `metadata is ${bytes} bytes as JSON, over the limit of ${MAX_METADATA_BYTES} bytes`,
      { path: 'metadata' },
    );
  }
}

/**
 * A pid (or a run number, with its `path`) from text (an HTTP path segment): decimal digits only, no sign, exponent, hex prefix or
 * spaces, as a positive safe integer.
 * @throws ServerError `VALIDATION` (path `pid`).
 */
export function parsePid(text: string | undefined, path = 'pid'): number {
  const pid = text !== undefined && /^[0-9]{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(pid) || pid <= 0)
    throw new ServerError(
      'VALIDATION',
      `${path} must be a positive decimal integer, got ${JSON.stringify(text)}`,
      {
        path,
      },
    );
  return pid;
}

/** The checked, normalized fields of a new process. */
export interface CheckedProcessInput extends EffectiveLimits {
  code: string;
  lang: string;
  ref?: string;
}

/**
 * Checks and normalizes what a new process asks for: code size, language, ref, limits, metadata.
 * @throws ServerError `VALIDATION` / `CODE_TOO_LARGE` with the field's `path`.
 */
export function checkProcessInput(
  policy: LimitPolicy,
  input: {
    code: unknown;
    lang?: unknown;
    ref?: unknown;
    timeoutMs?: number | null;
    memoryLimitMb?: number;
    metadata?: unknown;
  },
): CheckedProcessInput {
  const code = checkCode(policy, input.code);
  checkMetadata(input.metadata);
  const lang = normalizeLang(input.lang);
  const ref = normalizeRef(input.ref);
  return { code, lang, ...(ref === undefined ? {} : { ref }), ...resolveLimits(policy, input) };
}
