import type { ClusterMember } from '../cluster/cluster-member.ts';
import type { LiveProcess } from './live-process.ts';
import type { Principal } from './process-manager-types.ts';
import type { StatsCounters } from './process-stats.ts';
import type { QuotaGate } from './quota-gate.ts';
import type { Scheduler } from './scheduler.ts';
import { ServerError } from './server-error.ts';

/** What {@link QueueAdmission} counts with: the process manager's parts, read at each check. */
export interface QueueAdmissionParts {
  /** The most processes that may wait in the queue (in a cluster: on every node together). */
  readonly maxQueue: number;
  readonly quotas: QuotaGate;
  readonly scheduler: Scheduler<LiveProcess>;
  readonly stats: StatsCounters;
  /** The manager's processes that are not idle, by pid. */
  readonly live: ReadonlyMap<number, LiveProcess>;
  readonly cluster: ClusterMember | undefined;
}

/**
 * The admission rules of the run queue: whether a principal's new run may wait in it (`maxQueue`
 * and the principal's `maxQueued` quota), and whether a principal's waiting runs may start in a
 * cluster (its cluster-wide `maxRunning` quota).
 */
export class QueueAdmission {
  readonly #parts: QueueAdmissionParts;

  constructor(parts: QueueAdmissionParts) {
    this.#parts = parts;
  }

  /**
   * In a cluster `maxQueue` counts the processes waiting on every node (the others' as of the last
   * lease renewal); a principal's share (its `maxQueued` quota) counts those waiting on this node,
   * and on the other nodes too when the quota gives `maxQueued`.
   * @throws ServerError `QUEUE_FULL` past `maxQueue`, `QUOTA_EXCEEDED` past the principal's share.
   */
  checkRoom(principal: Principal): void {
    const { maxQueue, stats, cluster, live, quotas } = this.#parts;
    const queued = stats.byState.queued + (cluster?.queuedElsewhere() ?? 0);
    if (queued >= maxQueue) {
      throw new ServerError(
        'QUEUE_FULL',
        `the queue is full (${maxQueue} processes waiting${cluster ? ' in the cluster' : ''}); retry later`,
      );
    }
    let own = 0;
    for (const { record } of live.values())
      if (record.owner === principal.id && record.state === 'queued') own++;
    quotas.checkQueued(principal.id, own);
  }

  /** Whether principal `owner` runs as many as a cluster-wide `maxRunning` allows. */
  capped(owner: string): boolean {
    return this.#parts.quotas.capped(owner, this.#parts.scheduler.runningOf(owner));
  }
}
