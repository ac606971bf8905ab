import type { ProcessSnapshot, RunError, RunSnapshot } from '@mci/protocol';
import type { StoredProcess, StoredRun } from './process-store.ts';

/** The fields of a run a snapshot shows (everything but outputs and logs). */
export type RunFields = Omit<RunSnapshot, 'outputs' | 'stdout' | 'stderr'> & {
  /** The approvals a suspended run waits for (not stored with the run: read from the approvals). */
  pendingApprovals?: string[];
};

/** The wire form of an error: name, message, line, column (never the host stack). */
export function toRunError(error: {
  name?: unknown;
  message?: unknown;
  line?: unknown;
  column?: unknown;
}): RunError {
  const result: RunError = {
    name: typeof error.name === 'string' && error.name !== '' ? error.name : 'Error',
    message: typeof error.message === 'string' ? error.message : String(error.message),
  };
  if (typeof error.line === 'number' && Number.isInteger(error.line) && error.line > 0)
    result.line = error.line;
  if (typeof error.column === 'number' && Number.isInteger(error.column) && error.column > 0) {
    result.column = error.column;
  }
  return result;
}

/** A run's wall time as the wire shows it: milliseconds rounded to 0.01 ms (`22.98`, never `22.978319000000056`). */
export function wireDuration(durationMs: number): number {
  return Math.round(durationMs * 100) / 100;
}

/** The snapshot of a process from its record and its latest run (fields in a fixed order). */
export function toSnapshot(record: StoredProcess, run: RunFields | undefined): ProcessSnapshot {
  const snapshot: ProcessSnapshot = {
    pid: record.pid,
    state: record.state,
    status: record.status,
    ...(record.ref === undefined ? {} : { ref: record.ref }),
    lang: record.lang,
    createdAt: record.createdAt,
    run: record.runs,
    runs: record.runs,
    timeoutMs: record.timeoutMs,
    memoryLimitMb: record.memoryLimitMb,
  };
  if (record.check) snapshot.check = record.check;
  if (record.session !== undefined) snapshot.session = record.session;
  if (run?.error) snapshot.error = run.error;
  if (run?.warnings?.length) snapshot.warnings = run.warnings;
  if (record.metadata) snapshot.metadata = record.metadata;
  if (record.state === 'suspended' && run?.pendingApprovals) snapshot.pendingApprovals = run.pendingApprovals;
  if (run?.queuedAt) snapshot.queuedAt = run.queuedAt;
  if (run?.startedAt) snapshot.startedAt = run.startedAt;
  if (run?.endedAt) snapshot.endedAt = run.endedAt;
  if (run?.durationMs !== undefined) snapshot.durationMs = wireDuration(run.durationMs);
  return snapshot;
}

/** The wire form of a stored run (fields in a fixed order). */
export function toRunSnapshot(run: StoredRun): RunSnapshot {
  return {
    run: run.run,
    state: run.state,
    status: run.status,
    ...(run.queuedAt ? { queuedAt: run.queuedAt } : {}),
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    ...(run.endedAt ? { endedAt: run.endedAt } : {}),
    ...(run.durationMs === undefined ? {} : { durationMs: wireDuration(run.durationMs) }),
    ...(run.error ? { error: run.error } : {}),
    ...(run.warnings?.length ? { warnings: run.warnings } : {}),
    outputs: run.outputs,
    stdout: run.stdout,
    stderr: run.stderr,
    ...(run.truncated ? { truncated: true } : {}),
  };
}

/** The fields of a stored run without its outputs and logs. */
export function runFieldsOf({ outputs, stdout, stderr, pid, ...fields }: StoredRun): RunFields {
  return fields;
}
