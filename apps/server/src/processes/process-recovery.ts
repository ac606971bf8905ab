import type { StatsCounters } from './process-stats.ts';
import type { ProcessStore, StoredProcess, StoredRun } from './process-store.ts';
import type { LiveProcess } from './live-process.ts';
import { runFieldsOf } from './snapshots.ts';

/**
 * Reads back what a durable store holds after a restart: counts every stored process in `stats`, and
 * returns the processes that were neither idle nor suspended as live processes, in the order their runs were queued.
 * The caller queues the queued ones again and ends the others (their runs were interrupted). On a
 * store shared by a cluster only the processes of this node are read back.
 */
export async function recoverProcesses(store: ProcessStore, stats: StatsCounters): Promise<LiveProcess[]> {
  const stored = await store.listProcesses(store.cluster ? { node: store.cluster.node } : {});
  for (const record of stored) stats.add(record.state, record.status);
  const recovered: Array<{ live: LiveProcess; order: number }> = [];
  for (const record of stored) {
    // A suspended process waits in the store for its approval: nothing of it was interrupted.
    if (record.state === 'idle' || record.state === 'suspended') continue;
    const run = await store.getRun(record.pid, record.runs);
    // The seq of its latest event (a queued process's `queued` one) restores the queue order: a run
    // signal queues an older pid after newer ones.
    const order = (await store.eventsSince(0, { pid: record.pid })).at(-1)?.event.seq ?? 0;
    recovered.push({ live: liveProcessOf(record, run), order });
  }
  return recovered
    .sort((a, b) => a.order - b.order || a.live.record.pid - b.live.record.pid)
    .map(({ live }) => live);
}

/** A stored process that is not idle, as the manager holds it (not held, no kill requested). */
export function liveProcessOf(record: StoredProcess, run: StoredRun | undefined): LiveProcess {
  return {
    record,
    run: run ? runFieldsOf(run) : { run: record.runs, state: record.state, status: null },
    held: false,
    killRequested: false,
    done: false,
    waiters: [],
  };
}
