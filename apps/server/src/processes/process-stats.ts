import type { ProcessState, ProcessStatus } from '@mci/protocol';
import type { Histogram, ProcessStats } from './process-manager-types.ts';

/** Upper bounds (ms) of the run-duration histogram buckets. */
export const RUN_DURATION_BUCKETS_MS = [
  1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000,
];

type StatusKey = keyof ProcessStats['byStatus'];
const statusKey = (status: ProcessStatus): StatusKey => status ?? 'none';

/** Counters kept up to date by the process manager at every transition, read by `/metrics`. */
export class StatsCounters {
  readonly byState: Record<ProcessState, number> = {
    queued: 0,
    running: 0,
    suspended: 0,
    terminating: 0,
    idle: 0,
  };
  readonly byStatus: Record<StatusKey, number> = { success: 0, failed: 0, timeout: 0, canceled: 0, none: 0 };
  processesCreated = 0;
  runsStarted = 0;
  toolCalls = 0;
  toolErrors = 0;
  readonly #durations: Histogram = {
    buckets: RUN_DURATION_BUCKETS_MS,
    counts: RUN_DURATION_BUCKETS_MS.map(() => 0),
    sum: 0,
    count: 0,
  };

  /** A process appeared (created, or loaded from the store) in this state and status. */
  add(state: ProcessState, status: ProcessStatus): void {
    this.byState[state]++;
    this.byStatus[statusKey(status)]++;
  }

  /** A process was deleted. */
  remove(state: ProcessState, status: ProcessStatus): void {
    this.byState[state]--;
    this.byStatus[statusKey(status)]--;
  }

  move(
    from: { state: ProcessState; status: ProcessStatus },
    to: { state: ProcessState; status: ProcessStatus },
  ): void {
    this.remove(from.state, from.status);
    this.add(to.state, to.status);
  }

  recordDuration(ms: number): void {
    const histogram = this.#durations;
    histogram.sum += ms;
    histogram.count++;
    histogram.buckets.forEach((bound, i) => {
      if (ms <= bound) histogram.counts[i]!++;
    });
  }

  /** The counters as {@link ProcessStats}, with the manager's `concurrency`. */
  snapshot(concurrency: number): Omit<ProcessStats, 'quotas'> {
    return {
      byState: { ...this.byState },
      byStatus: { ...this.byStatus },
      queueLength: this.byState.queued,
      running: this.byState.running + this.byState.terminating,
      concurrency,
      processesCreated: this.processesCreated,
      runsStarted: this.runsStarted,
      toolCalls: this.toolCalls,
      toolErrors: this.toolErrors,
      runDurationsMs: {
        ...this.#durations,
        buckets: [...this.#durations.buckets],
        counts: [...this.#durations.counts],
      },
    };
  }
}
