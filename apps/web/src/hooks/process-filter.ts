import type { ProcessSnapshot, ProcessState } from '@mci/client';

/** What the Processes page filters on; empty fields match everything. */
export interface ProcessFilter {
  state?: ProcessState;
  /** A run status, or `none` for processes without a finished run. */
  status?: 'success' | 'failed' | 'timeout' | 'canceled' | 'none';
  /** Exact ref. */
  ref?: string;
  /** Case-insensitive text searched in the code (once loaded), the ref, the pid and the error. */
  text?: string;
}

/** True when `snapshot` (with its `code`, if known) passes `filter`. */
export function matchesFilter(
  snapshot: ProcessSnapshot,
  filter: ProcessFilter,
  code: string | undefined,
): boolean {
  if (filter.state !== undefined && snapshot.state !== filter.state) return false;
  if (filter.status !== undefined && (snapshot.status ?? 'none') !== filter.status) return false;
  if (filter.ref !== undefined && filter.ref !== '' && snapshot.ref !== filter.ref) return false;
  const text = filter.text?.trim().toLowerCase();
  if (text === undefined || text === '') return true;
  return [code, snapshot.ref, String(snapshot.pid), snapshot.error?.message].some((field) =>
    field?.toLowerCase().includes(text),
  );
}

/** True when `filter` lets every process through. */
export function isEmptyFilter(filter: ProcessFilter): boolean {
  return !filter.state && !filter.status && !filter.ref && !filter.text?.trim();
}
