/** `ms` as `850 ms`, `1.2 s` or `2 min 5 s`. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

// One formatter for every row: `toLocaleTimeString` builds a new one at each call.
const TIME = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An ISO 8601 timestamp as a local time of day (`5:57:03 PM`). */
export function formatTime(iso: string): string {
  return TIME.format(new Date(iso));
}

/** An ISO 8601 timestamp as a local date and time. */
export function formatDateTime(iso: string): string {
  return DATE_TIME.format(new Date(iso));
}
