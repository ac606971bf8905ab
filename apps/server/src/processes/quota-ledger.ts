import type { ResolvedQuota } from './quota-policy.ts';

/** The length of a quota window, in ms: `runsPerMinute` and `cpuMsPerMinute` count per minute. */
export const QUOTA_WINDOW_MS = 60_000;

/** A run refused by a per-minute quota. */
export interface QuotaRefusal {
  quota: 'runsPerMinute' | 'cpuMsPerMinute';
  /** What the principal used in this window (runs, or CPU ms) and its quota. */
  used: number;
  limit: number;
  /** Time until the window ends and the count starts again, in ms. */
  retryAfterMs: number;
}

/** What one principal used in the current window. */
export interface WindowUse {
  runs: number;
  /** Sandbox CPU time of its runs that ended in the window, in ms. */
  cpuMs: number;
}

/**
 * Counts runs and sandbox CPU time per principal in fixed one-minute windows (aligned to the clock's
 * minutes) and admits a new run while both are under the principal's quota. The process manager
 * asks it before it queues a run; a run refused here is not created.
 *
 * {@link LocalQuotaLedger} counts on this node; a cluster counts in its database (see
 * `ClusterQuotaLedger` and docs/cluster.md).
 */
export interface QuotaLedger {
  /**
   * Counts one run of `owner` if its window is under `quota` (runs and CPU ms).
   * @returns the refusal, or undefined when the run was counted.
   * @throws StoreError `STORE_UNAVAILABLE` when a shared count cannot be reached.
   */
  take(owner: string, quota: ResolvedQuota): Promise<QuotaRefusal | undefined>;
  /**
   * {@link QuotaLedger.take} without waiting, for runs that must be queued at once (runs of a
   * stream): it decides on what this node knows.
   */
  takeNow(owner: string, quota: ResolvedQuota): QuotaRefusal | undefined;
  /** Takes back a run counted by `take` that was not queued after all (a later check refused it). */
  refund(owner: string): void;
  /** Adds `cpuMs` (whole ms) of sandbox CPU time of a run of `owner` that ended to the current window. */
  charge(owner: string, cpuMs: number): void;
  /** What each principal with runs or CPU time in the current window used, as this node knows it. */
  use(): Map<string, WindowUse>;
}

/** The window that holds `nowMs`: its index (minutes since the epoch) and the ms left in it. */
export function windowAt(nowMs: number): { index: number; leftMs: number } {
  const index = Math.floor(nowMs / QUOTA_WINDOW_MS);
  return { index, leftMs: (index + 1) * QUOTA_WINDOW_MS - nowMs };
}

/** The refusal of a run of a principal that used `use` of `quota` in a window with `leftMs` to go. */
export function refusalOf(use: WindowUse, quota: ResolvedQuota, leftMs: number): QuotaRefusal | undefined {
  if (use.runs >= quota.runsPerMinute)
    return { quota: 'runsPerMinute', used: use.runs, limit: quota.runsPerMinute, retryAfterMs: leftMs };
  if (use.cpuMs >= quota.cpuMsPerMinute)
    return { quota: 'cpuMsPerMinute', used: use.cpuMs, limit: quota.cpuMsPerMinute, retryAfterMs: leftMs };
  return undefined;
}

/** The entries of `windows` in window `index`, as plain counts. */
export function currentUse(
  windows: ReadonlyMap<string, WindowUse & { index: number }>,
  index: number,
): Map<string, WindowUse> {
  const use = new Map<string, WindowUse>();
  for (const [owner, entry] of windows)
    if (entry.index === index) use.set(owner, { runs: entry.runs, cpuMs: entry.cpuMs });
  return use;
}

/**
 * The entry of `owner` in window `index` (a zero one when it has none yet, stored in `windows`); the
 * entries of other windows are dropped from `windows` first.
 */
export function windowEntry(
  windows: Map<string, WindowUse & { index: number }>,
  owner: string,
  index: number,
): WindowUse & { index: number } {
  let entry = windows.get(owner);
  if (entry?.index !== index) {
    for (const [key, old] of windows) if (old.index !== index) windows.delete(key);
    entry = { index, runs: 0, cpuMs: 0 };
    windows.set(owner, entry);
  }
  return entry;
}

/**
 * A {@link QuotaLedger} in this process's memory: exact for one server; a restart starts every
 * window from zero.
 */
export class LocalQuotaLedger implements QuotaLedger {
  readonly #windows = new Map<string, WindowUse & { index: number }>();
  readonly #now: () => number;

  /** @param now the clock, in ms since the epoch. @default Date.now */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  take(owner: string, quota: ResolvedQuota): Promise<QuotaRefusal | undefined> {
    return Promise.resolve(this.takeNow(owner, quota));
  }

  takeNow(owner: string, quota: ResolvedQuota): QuotaRefusal | undefined {
    const { leftMs } = windowAt(this.#now());
    const current = this.#current(owner);
    const refusal = refusalOf(current, quota, leftMs);
    if (!refusal) current.runs++;
    return refusal;
  }

  refund(owner: string): void {
    const current = this.#current(owner);
    current.runs = Math.max(0, current.runs - 1);
  }

  charge(owner: string, cpuMs: number): void {
    this.#current(owner).cpuMs += cpuMs;
  }

  use(): Map<string, WindowUse> {
    return currentUse(this.#windows, windowAt(this.#now()).index);
  }

  /** The entry of `owner` in the current window; entries of past windows are dropped. */
  #current(owner: string): WindowUse & { index: number } {
    return windowEntry(this.#windows, owner, windowAt(this.#now()).index);
  }
}
