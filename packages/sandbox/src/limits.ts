import { SandboxError } from './sandbox-error.ts';

/** The limits of one execution. Every field is configurable per pool and per execution. */
export interface SandboxLimits {
  /** Wall-clock time for the whole execution, awaits included, in milliseconds. @default 30000 */
  timeoutMs: number;
  /** The isolate's heap limit in MB (isolated-vm `memoryLimit`; at least 8). @default 128 */
  memoryLimitMb: number;
  /** Total bytes of `output()` values (V8 serialized size); later outputs are dropped. @default 1048576 */
  maxOutputBytes: number;
  /** Total UTF-8 bytes written by `console.*` (stdout and stderr together). @default 1048576 */
  maxLogBytes: number;
  /** Tool calls and fetches one execution may make; later ones reject in the sandbox. @default 1000 */
  maxToolCalls: number;
  /** Tool calls and fetches running at once; further ones wait for a slot. @default 16 */
  maxConcurrentToolCalls: number;
  /** Bytes of one `fetch` response body; a larger body rejects the `fetch`. @default 10485760 */
  maxFetchResponseBytes: number;
}

/** The default limits (30 s, 128 MB, 1 MiB of outputs and of logs, 1000 / 16 tool calls). */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  timeoutMs: 30_000,
  memoryLimitMb: 128,
  maxOutputBytes: 1024 * 1024,
  maxLogBytes: 1024 * 1024,
  maxToolCalls: 1000,
  maxConcurrentToolCalls: 16,
  maxFetchResponseBytes: 10 * 1024 * 1024,
});

const MINIMUM: Record<keyof SandboxLimits, number> = {
  timeoutMs: 1,
  memoryLimitMb: 8,
  maxOutputBytes: 0,
  maxLogBytes: 0,
  maxToolCalls: 0,
  maxConcurrentToolCalls: 1,
  maxFetchResponseBytes: 0,
};

/**
 * Merges limit layers (later wins) over {@link DEFAULT_LIMITS} and checks each value is an integer
 * within range (for example `memoryLimitMb >= 8`).
 *
 * @throws SandboxError `INVALID_LIMIT` naming the bad field.
 */
export function resolveLimits(...layers: Array<Partial<SandboxLimits> | undefined>): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS };
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of Object.keys(MINIMUM) as Array<keyof SandboxLimits>) {
      const value = layer[key];
      if (value === undefined) continue;
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < MINIMUM[key]) {
        throw new SandboxError(
          'INVALID_LIMIT',
          `limits.${key} must be an integer >= ${MINIMUM[key]}, got ${JSON.stringify(value) ?? String(value)}`,
        );
      }
      limits[key] = value;
    }
  }
  return limits;
}
