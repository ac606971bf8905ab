import type { ProcessEvent, ProcessSnapshot } from '@mci/protocol';

/** True when a process is idle after a run (status set): not queued, running, or never run. */
export function isFinished(snapshot: Pick<ProcessSnapshot, 'state' | 'status'>): boolean {
  return snapshot.state === 'idle' && snapshot.status !== null;
}

/** The run whose end a waiter waits for: the current one, or the first for a process not run yet. */
export function runToWaitFor(snapshot: ProcessSnapshot): number {
  return Math.max(snapshot.run, 1);
}

/** The snapshot inside a `process` event. */
export function toSnapshot(event: ProcessEvent): ProcessSnapshot {
  const { type: _type, seq: _seq, ...snapshot } = event;
  return snapshot;
}
