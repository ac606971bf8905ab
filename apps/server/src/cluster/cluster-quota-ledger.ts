import type pg from 'pg';
import {
  currentUse,
  QUOTA_WINDOW_MS,
  type QuotaLedger,
  type QuotaRefusal,
  refusalOf,
  type WindowUse,
  windowAt,
  windowEntry,
} from '../processes/quota-ledger.ts';
import type { ResolvedQuota } from '../processes/quota-policy.ts';
import { StoreError } from '../store/store-error.ts';

/** The current window on the database clock, so that nodes with skewed clocks count in the same one. */
const WINDOW = `floor(extract(epoch FROM now()) * 1000 / ${QUOTA_WINDOW_MS})::bigint`;

/**
 * Counts one run when the window's runs and CPU ms are under the quota, in one statement: the row
 * lock of the upsert orders the nodes, so two nodes together never count past a quota. A refused run
 * returns no `up` row; `before` says what the window held and `left_ms` how long it still lasts.
 */
const TAKE = `
  WITH w AS (SELECT ${WINDOW} AS start, extract(epoch FROM now()) * 1000 AS at),
  up AS (
    INSERT INTO quota_windows (owner, window_start, runs, cpu_ms)
      SELECT $1, w.start, 1, 0 FROM w
    ON CONFLICT (owner, window_start) DO UPDATE SET runs = quota_windows.runs + 1
      WHERE ($2::bigint IS NULL OR quota_windows.runs < $2) AND ($3::bigint IS NULL OR quota_windows.cpu_ms < $3)
    RETURNING runs, cpu_ms
  )
  SELECT (SELECT runs FROM up) AS runs, (SELECT cpu_ms FROM up) AS cpu_ms,
         (SELECT runs FROM quota_windows q, w WHERE q.owner = $1 AND q.window_start = w.start) AS before_runs,
         (SELECT cpu_ms FROM quota_windows q, w WHERE q.owner = $1 AND q.window_start = w.start) AS before_cpu_ms,
         ((w.start + 1) * ${QUOTA_WINDOW_MS} - w.at)::float8 AS left_ms
    FROM w`;

const ADD = `
  INSERT INTO quota_windows (owner, window_start, runs, cpu_ms) VALUES ($1, ${WINDOW}, $2, $3)
  ON CONFLICT (owner, window_start) DO UPDATE
    SET runs = greatest(0, quota_windows.runs + $2), cpu_ms = quota_windows.cpu_ms + $3`;

/** Rows of windows that ended before the previous one are of no use. */
const PRUNE = `DELETE FROM quota_windows WHERE window_start < ${WINDOW} - 1`;

interface TakeRow {
  runs: number | null;
  cpu_ms: string | null;
  before_runs: number | null;
  before_cpu_ms: string | null;
  left_ms: number;
}

/**
 * The {@link QuotaLedger} of a cluster: the `quota_windows` table of its PostgreSQL database holds
 * each principal's runs and CPU ms per minute (on the database clock), shared by every node.
 *
 * `take` is exact across nodes (one conditional upsert). CPU time is added when a run ends, so runs
 * admitted while the window was under `cpuMsPerMinute` may together go past it. `takeNow` (runs of a
 * stream, which are queued without waiting) decides on this node's last view of the window and adds
 * its run afterwards. What `use` reports is this node's view: the counts the database returned to
 * it, plus its own runs and CPU since. See docs/cluster.md, "Quotas".
 */
export class ClusterQuotaLedger implements QuotaLedger {
  readonly #pool: pg.Pool;
  /** This node's view of each principal's window (local clock index, database counts). */
  readonly #views = new Map<string, WindowUse & { index: number }>();
  #prunedAt = -1;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async take(owner: string, quota: ResolvedQuota): Promise<QuotaRefusal | undefined> {
    this.#prune();
    let row: TakeRow | undefined;
    try {
      const result = await this.#pool.query<TakeRow>(TAKE, [
        owner,
        limit(quota.runsPerMinute),
        limit(quota.cpuMsPerMinute),
      ]);
      row = result.rows[0];
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new StoreError('STORE_UNAVAILABLE', 'postgres', `the quota count could not be read: ${message}`, {
        cause: error,
      });
    }
    if (!row) throw new StoreError('STORE_UNAVAILABLE', 'postgres', 'the quota count returned no row');
    if (row.runs !== null) {
      this.#see(owner, { runs: row.runs, cpuMs: Number(row.cpu_ms) });
      return undefined;
    }
    const before = { runs: row.before_runs ?? 0, cpuMs: Number(row.before_cpu_ms ?? 0) };
    this.#see(owner, before);
    return (
      refusalOf(before, quota, Math.max(0, row.left_ms)) ?? {
        quota: 'runsPerMinute',
        used: before.runs,
        limit: quota.runsPerMinute,
        retryAfterMs: Math.max(0, row.left_ms),
      }
    );
  }

  takeNow(owner: string, quota: ResolvedQuota): QuotaRefusal | undefined {
    const view = this.#view(owner);
    const refusal = refusalOf(view, quota, windowAt(Date.now()).leftMs);
    if (refusal) return refusal;
    view.runs++;
    this.#add(owner, 1, 0);
    return undefined;
  }

  refund(owner: string): void {
    const view = this.#view(owner);
    view.runs = Math.max(0, view.runs - 1);
    this.#add(owner, -1, 0);
  }

  charge(owner: string, cpuMs: number): void {
    this.#view(owner).cpuMs += cpuMs;
    this.#add(owner, 0, cpuMs);
  }

  use(): Map<string, WindowUse> {
    return currentUse(this.#views, windowAt(Date.now()).index);
  }

  #see(owner: string, use: WindowUse): void {
    this.#view(owner); // drops the views of past windows
    this.#views.set(owner, { index: windowAt(Date.now()).index, ...use });
  }

  #view(owner: string): WindowUse & { index: number } {
    return windowEntry(this.#views, owner, windowAt(Date.now()).index);
  }

  /**
   * Adds to the shared count without waiting. A write that fails (the database away) is dropped: the
   * count is then low by that much for the rest of the minute.
   */
  #add(owner: string, runs: number, cpuMs: number): void {
    this.#pool.query(ADD, [owner, runs, cpuMs]).catch(() => {});
  }

  /** Deletes the rows of past windows, once per window on each node. */
  #prune(): void {
    const { index } = windowAt(Date.now());
    if (index === this.#prunedAt) return;
    this.#prunedAt = index;
    this.#pool.query(PRUNE).catch(() => {});
  }
}

/** A quota as a bound parameter: null for no limit. */
function limit(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}
