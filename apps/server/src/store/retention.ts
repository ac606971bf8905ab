import type { ExpiryPolicy, SqlProcessStore } from './sql/sql-store.ts';

/** Options of {@link startRetention}. */
export interface RetentionOptions {
  /** Idle processes whose last state change is older than this (ms) are deleted. @default 604800000 (7 days) */
  maxAgeMs?: number;
  /**
   * Most processes kept per principal; past it, that principal's idle ones are deleted, oldest last
   * change first (another principal's are never touched). @default 100000
   */
  maxProcesses?: number;
  /**
   * Most bytes of stored outputs and logs kept per principal; past it, that principal's idle processes
   * are deleted, oldest last change first, until the rest fits (another principal's are never
   * touched). Bytes of queued and running processes count but are never deleted. @default 1073741824 (1 GiB)
   */
  maxBytes?: number;
  /** Time between sweeps, in ms (the first one runs at start). @default 60000 */
  intervalMs?: number;
  /** A background sweep failed (it is retried at the next interval). @default a process warning */
  onError?: (error: unknown) => void;
}

/** A running retention job. */
export interface Retention {
  /** Runs one sweep now (at most `batch` deletions); returns how many processes it deleted. */
  sweep(now?: number): Promise<number>;
  /** Stops sweeping (idempotent). */
  stop(): void;
}

/** 7 days, in ms. */
export const DEFAULT_RETENTION_MAX_AGE_MS = 7 * 24 * 3_600_000;
export const DEFAULT_RETENTION_MAX_PROCESSES = 100_000;
/** 1 GiB, in bytes. */
export const DEFAULT_RETENTION_MAX_BYTES = 1024 ** 3;
/** Deletions per sweep step; a larger backlog continues on the next turns, so requests are served between. */
const BATCH = 500;

/**
 * Deletes old processes in the background: idle ones whose last state change is older than `maxAgeMs`,
 * and, for a principal past `maxProcesses` or `maxBytes`, its idle ones whose last change is oldest. Queued, running and terminating
 * processes are never deleted. `remove(pid)` deletes one (the process manager's `delete`, so its
 * counters follow); it may throw for a process that is no longer idle (skipped). Events that belong to
 * no process (intents, stream results) older than `maxAgeMs` go too. Timers are unref'd.
 * @throws RangeError for a non-positive option.
 */
export function startRetention(
  store: Pick<SqlProcessStore, 'expiredProcesses' | 'deleteUnownedEvents'>,
  remove: (pid: number) => Promise<void> | void,
  options: RetentionOptions = {},
): Retention {
  const maxAgeMs = positive('maxAgeMs', options.maxAgeMs, DEFAULT_RETENTION_MAX_AGE_MS);
  const maxProcesses = positive('maxProcesses', options.maxProcesses, DEFAULT_RETENTION_MAX_PROCESSES);
  const maxBytes = positive('maxBytes', options.maxBytes, DEFAULT_RETENTION_MAX_BYTES);
  const intervalMs = positive('intervalMs', options.intervalMs, 60_000);
  const onError =
    options.onError ??
    ((error: unknown) => process.emitWarning(`process retention failed: ${String(error)}`));
  let stopped = false;
  let next: NodeJS.Timeout | undefined;

  /** One step: deletes up to BATCH expired processes; `more` when there may be others left. */
  const step = async (now: number): Promise<{ deleted: number; more: boolean }> => {
    if (stopped) return { deleted: 0, more: false };
    const policy: ExpiryPolicy = { maxAgeMs, maxProcesses, maxBytes, limit: BATCH, now };
    const expired = await store.expiredProcesses(policy);
    // All at once, so the deletions share one commit of the store. One that fails was run again (or
    // deleted) since it was selected: it is not expired any more.
    const removed = await Promise.allSettled(expired.map(async (pid) => remove(pid)));
    const deleted = removed.filter((result) => result.status === 'fulfilled').length;
    store.deleteUnownedEvents(now - maxAgeMs);
    return { deleted, more: expired.length >= BATCH && deleted > 0 };
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    next = setTimeout(async () => {
      let more = false;
      try {
        more = (await step(Date.now())).more;
      } catch (error) {
        onError(error);
      }
      schedule(more ? 0 : intervalMs);
    }, delayMs);
    next.unref();
  };
  schedule(0);
  return {
    sweep: async (now = Date.now()) => (await step(now)).deleted,
    stop() {
      stopped = true;
      clearTimeout(next);
    },
  };
}

/**
 * Runs `sweep` every `intervalMs` (@default 60000) on an unref'd timer, for the retention of what is
 * not a process (conversations, sessions); a rejection goes to `onError` and the next interval tries
 * again.
 */
export function sweepEvery(
  intervalMs: number | undefined,
  sweep: () => Promise<unknown>,
  onError: (error: unknown) => void,
): { stop(): void } {
  const timer = setInterval(() => void sweep().catch(onError), intervalMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`retention ${name} must be positive, got ${value}`);
  return value;
}
