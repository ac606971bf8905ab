import type { ProcessSnapshot, ServerEvent } from '@mci/client';
import type { CliIo, OutputStream } from './io.ts';

/** A duration in ms rounded to 0.01 ms, as every `mci` command prints one. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** `850ms`, `1.2s`, `3m04s`, `2h05m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** How long ago an ISO 8601 time was: `12s`, `3m`, `5h`, `2d`. */
export function formatAge(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** Duration of the latest run: its total once ended, the time so far while running, `-` otherwise. */
export function runDuration(process: ProcessSnapshot, now = Date.now()): string {
  if (process.durationMs !== undefined) return formatDuration(process.durationMs);
  if (process.startedAt !== undefined && process.endedAt === undefined) {
    return formatDuration(now - Date.parse(process.startedAt));
  }
  return '-';
}

/** `pid 7: idle (success, run 2, 1.2s)`, `pid 7: running (run 1)`, with the error of a failed run. */
export function describeProcess(process: ProcessSnapshot): string {
  const parts = [process.status, process.run > 0 ? `run ${process.run}` : 'not run yet'];
  if (process.durationMs !== undefined) parts.push(formatDuration(process.durationMs));
  const details = parts.filter((part) => part !== null).join(', ');
  const error = process.error
    ? `: ${process.error.name}: ${process.error.message}${process.error.line ? ` (line ${process.error.line})` : ''}`
    : '';
  return `pid ${process.pid}: ${process.state} (${details})${error}`;
}

/**
 * Writes one event of a process the way `logs` and `submit --wait` show it: outputs as
 * `[output] JSON` lines on stdout, console text as is (stdout or stderr).
 */
export function printEvent(
  event: ServerEvent,
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  write: (text: string, to: OutputStream) => void,
): void {
  if (event.type === 'output') write(`[output] ${JSON.stringify(event.value) ?? 'undefined'}\n`, io.stdout);
  else if (event.type === 'log') write(event.text, event.stream === 'stderr' ? io.stderr : io.stdout);
}

/** Fields holding a duration in ms, printed rounded by {@link roundMs}. */
const DURATION_FIELDS = new Set(['durationMs', 'cpuTimeMs']);

/**
 * The JSON text (indented) `mci` prints for a result or snapshot, durations rounded to 0.01 ms.
 * Output values must already be in the wire encoding (`encodeOutputValue` of `@mci/protocol`).
 */
export function toJsonText(value: unknown): string {
  return JSON.stringify(
    value,
    function (this: unknown, key: string, converted: unknown) {
      const raw = (this as Record<string, unknown>)[key];
      if (DURATION_FIELDS.has(key) && typeof raw === 'number') return roundMs(raw);
      return converted;
    },
    2,
  );
}
