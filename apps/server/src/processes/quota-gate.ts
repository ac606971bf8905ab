import type { ProcessState } from '@mci/protocol';
import type { PrincipalUse } from './process-manager-types.ts';
import type { QuotaLedger, QuotaRefusal } from './quota-ledger.ts';
import type { QuotaPolicy } from './quota-policy.ts';
import { ServerError } from './server-error.ts';

/** The label of every principal not named in `quotas.principals`, in {@link QuotaGate.use}. */
export const OTHER_PRINCIPALS = 'other';

/** Each principal's processes on the other nodes of a cluster (see `PrincipalLoad`). */
export interface LoadElsewhere {
  running(owner: string): number;
  queued(owner: string): number;
}

/**
 * Applies the quotas of {@link QuotaPolicy} to new runs: `maxQueued` and the per-minute quotas of the
 * {@link QuotaLedger} refuse a run with `QUOTA_EXCEEDED` (429, with `retryAfter` seconds) before
 * anything is created; `maxRunning` is the scheduler's limit per principal (a run past it waits).
 *
 * On a cluster node (`elsewhere` given), a `maxRunning` or `maxQueued` given in the quotas counts the
 * principal's processes on every node: the scheduler's limit is `maxRunning` less the runs elsewhere.
 * Those that fall back to `maxRunningPerPrincipal` and `maxQueuedPerPrincipal` count on this node.
 */
export class QuotaGate {
  readonly #policy: QuotaPolicy;
  readonly #ledger: QuotaLedger;
  readonly #elsewhere: LoadElsewhere | undefined;
  readonly #refused = new Map<string, number>();

  constructor(policy: QuotaPolicy, ledger: QuotaLedger, elsewhere?: LoadElsewhere) {
    this.#policy = policy;
    this.#ledger = ledger;
    this.#elsewhere = elsewhere;
  }

  /** Runs of principal `id` that may run at once on this node (never below 0). */
  maxRunning(id: string): number {
    const { maxRunning } = this.#policy.of(id);
    if (!this.#elsewhere || !this.#policy.given(id, 'maxRunning')) return maxRunning;
    return Math.max(0, maxRunning - this.#elsewhere.running(id));
  }

  /**
   * Whether principal `id`, with `running` runs on this node, runs as many as a cluster-wide
   * `maxRunning` allows (so no node may start another of its runs now).
   */
  capped(id: string, running: number): boolean {
    return (
      this.#elsewhere !== undefined && this.#policy.given(id, 'maxRunning') && running >= this.maxRunning(id)
    );
  }

  /**
   * Checks that principal `id`, with `queued` processes waiting on this node, may queue one more.
   * @throws ServerError `QUOTA_EXCEEDED` past its `maxQueued`.
   */
  checkQueued(id: string, queued: number): void {
    const { maxQueued } = this.#policy.of(id);
    const elsewhere = this.#policy.given(id, 'maxQueued') ? this.#elsewhere : undefined;
    const waiting = queued + (elsewhere?.queued(id) ?? 0);
    if (waiting < maxQueued) return;
    this.#count(id);
    throw new ServerError(
      'QUOTA_EXCEEDED',
      `${waiting} of your processes are waiting${elsewhere ? ' in the cluster' : ''}, your share of the queue (maxQueued ${maxQueued}); retry when some have run`,
      { retryAfter: 1 },
    );
  }

  /**
   * Counts a new run of principal `id` in its per-minute quotas.
   * @throws ServerError `QUOTA_EXCEEDED` (nothing counted) past `runsPerMinute` or `cpuMsPerMinute`.
   * @throws StoreError `STORE_UNAVAILABLE` when a cluster's count cannot be reached.
   */
  async admit(id: string): Promise<void> {
    this.#refuse(id, await this.#ledger.take(id, this.#policy.of(id)));
  }

  /** {@link QuotaGate.admit} at once, on what this node knows (runs of a stream). */
  admitNow(id: string): void {
    this.#refuse(id, this.#ledger.takeNow(id, this.#policy.of(id)));
  }

  /** Takes back a run admitted that was not queued after all. */
  refund(id: string): void {
    this.#ledger.refund(id);
  }

  /** Counts `cpuMs` of sandbox CPU time of a run of principal `id` that ended (whole ms, rounded up). */
  charge(id: string, cpuMs: number): void {
    if (cpuMs > 0) this.#ledger.charge(id, Math.ceil(cpuMs));
  }

  /**
   * Use per principal for `/metrics`: one row per principal named in `quotas.principals` and one
   * ({@link OTHER_PRINCIPALS}) for everyone else, so the label count stays bounded by the config.
   * @param live the owner and state of each process that is not idle on this node.
   */
  use(live: Iterable<{ owner: string; state: ProcessState }>): PrincipalUse[] {
    const named = this.#policy.named();
    const rows = new Map<string, PrincipalUse>();
    for (const principal of [...named, OTHER_PRINCIPALS])
      rows.set(principal, { principal, running: 0, queued: 0, runs: 0, cpuMs: 0, refused: 0 });
    const rowOf = (id: string) => rows.get(named.includes(id) ? id : OTHER_PRINCIPALS)!;
    for (const { owner, state } of live) {
      const row = rowOf(owner);
      if (state === 'queued') row.queued++;
      else if (state === 'running' || state === 'terminating') row.running++;
    }
    for (const [id, use] of this.#ledger.use()) {
      const row = rowOf(id);
      row.runs += use.runs;
      row.cpuMs += use.cpuMs;
    }
    for (const [id, refused] of this.#refused) rowOf(id).refused += refused;
    return [...rows.values()];
  }

  #refuse(id: string, refusal: QuotaRefusal | undefined): void {
    if (!refusal) return;
    this.#count(id);
    const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
    const what =
      refusal.quota === 'runsPerMinute'
        ? `${refusal.used} runs of yours started this minute`
        : `your runs used ${refusal.used} ms of sandbox CPU time this minute`;
    throw new ServerError(
      'QUOTA_EXCEEDED',
      `${what}, your quota (${refusal.quota} ${refusal.limit}); retry in ${seconds} s`,
      { retryAfter: seconds },
    );
  }

  #count(id: string): void {
    this.#refused.set(id, (this.#refused.get(id) ?? 0) + 1);
  }
}
