import type { ExpiryPolicy, SqliteProcessStore } from './sqlite-store.ts';

/** Options of {@link startRetention}. */
export interface RetentionOptions {
  /** Idle processes whose last state change is older than this (ms) are deleted. @default 604800000 (7 days) */
  maxAgeMs?: number;
  /** Most processes kept; past it, idle ones are deleted, oldest last change first. @default 100000 */
  maxProcesses?: number;
  /** Time between sweeps, in ms (the first one runs at start). @default 60000 */
  intervalMs?: number;
  /** A background sweep failed (it is retried at the next interval). @default a process warning */
  onError?: (error: unknown) => void;
}

/** A running retention job. */
export interface Retention {
  /** Runs one sweep now (at most `batch` deletions); returns how many processes it deleted. */
  sweep(now?: number): number;
  /** Stops sweeping (idempotent). */
  stop(): void;
}

/** 7 days, in ms. */
export const DEFAULT_RETENTION_MAX_AGE_MS = 7 * 24 * 3_600_000;
export const DEFAULT_RETENTION_MAX_PROCESSES = 100_000;
/** Deletions per sweep step; a larger backlog continues on the next turns, so requests are served between. */
const BATCH = 500;

/**
 * Deletes old processes in the background: idle ones whose last state change is older than `maxAgeMs`,
 * and, past `maxProcesses`, the idle ones whose last change is oldest. Queued, running and terminating
 * processes are never deleted. `remove(pid)` deletes one (the process manager's `delete`, so its
 * counters follow); it may throw for a process that is no longer idle (skipped). Events that belong to
 * no process (intents, stream results) older than `maxAgeMs` go too. Timers are unref'd.
 * @throws RangeError for a non-positive option.
 */
export function startRetention(
  store: Pick<SqliteProcessStore, 'expiredProcesses' | 'deleteUnownedEvents'>,
  remove: (pid: number) => void,
  options: RetentionOptions = {},
): Retention {
  const maxAgeMs = positive('maxAgeMs', options.maxAgeMs, DEFAULT_RETENTION_MAX_AGE_MS);
  const maxProcesses = positive('maxProcesses', options.maxProcesses, DEFAULT_RETENTION_MAX_PROCESSES);
  const intervalMs = positive('intervalMs', options.intervalMs, 60_000);
  const onError =
    options.onError ??
    ((error: unknown) => process.emitWarning(`process retention failed: ${String(error)}`));
  let stopped = false;
  let next: NodeJS.Timeout | undefined;

  const sweep = (now = Date.now()): number => {
    if (stopped) return 0;
    const policy: ExpiryPolicy = { maxAgeMs, maxProcesses, limit: BATCH, now };
    let deleted = 0;
    for (const pid of store.expiredProcesses(policy)) {
      try {
        remove(pid);
        deleted++;
      } catch {
        // It was run again (or deleted) since it was selected: not expired any more.
      }
    }
    store.deleteUnownedEvents(now - maxAgeMs);
    return deleted;
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    next = setTimeout(() => {
      let deleted = 0;
      try {
        deleted = sweep();
      } catch (error) {
        onError(error);
      }
      schedule(deleted >= BATCH ? 0 : intervalMs);
    }, delayMs);
    next.unref();
  };
  schedule(0);
  return {
    sweep,
    stop() {
      stopped = true;
      clearTimeout(next);
    },
  };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`retention ${name} must be positive, got ${value}`);
  return value;
}
