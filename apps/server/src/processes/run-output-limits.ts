import type { ByteRateBudget } from './byte-rate-budget.ts';

/**
 * Most output events one run delivers (stored and sent); later outputs are dropped and the run is
 * marked `truncated`. The sandbox bounds output bytes; this bounds the count (a 1 MiB budget holds
 * about a million `output(0)`), so one run cannot flood the store and every subscriber.
 */
export const MAX_OUTPUT_EVENTS_PER_RUN = 10_000;

/**
 * Bytes of outputs (their JSON) and logs (UTF-8) one run may have stored and sent per second, with
 * bursts of twice that; past it outputs are dropped, log texts cut to what fits, the run is marked
 * `truncated` and its stderr ends with a note of what was dropped.
 */
export const DEFAULT_OUTPUT_BYTES_PER_SECOND = 1024 * 1024;

/** What a run's limits dropped: counts, and which limit did it. */
export interface DroppedOutput {
  outputs: number;
  /** UTF-8 bytes of log text. */
  logBytes: number;
  overRate: boolean;
  overCount: boolean;
}

/**
 * The longest start of `text` that `budget` takes, in whole characters (taken from the budget);
 * `droppedBytes` is the UTF-8 size of the rest.
 */
export function fitText(budget: ByteRateBudget, text: string): { text: string; droppedBytes: number } {
  const bytes = Buffer.byteLength(text);
  if (budget.take(bytes)) return { text, droppedBytes: 0 };
  const room = Math.min(budget.available(), bytes);
  const { read, written } =
    room > 0 ? new TextEncoder().encodeInto(text, new Uint8Array(room)) : { read: 0, written: 0 };
  budget.take(written);
  return { text: text.slice(0, read), droppedBytes: bytes - written };
}

/**
 * The line that ends the stderr of a run that lost outputs or logs to the server's limits.
 * @param outputBytesPerSecond The rate limit in force (bytes per second), named in the note.
 */
export function truncationNote(dropped: DroppedOutput, outputBytesPerSecond: number): string {
  const limits = [
    ...(dropped.overRate
      ? [`${outputBytesPerSecond} bytes of outputs and logs per second (bursts of twice that)`]
      : []),
    ...(dropped.overCount ? [`${MAX_OUTPUT_EVENTS_PER_RUN} output events per run`] : []),
  ];
  return `\n[mci] this run is truncated: ${dropped.outputs} outputs and ${dropped.logBytes} bytes of logs were dropped, over the server's limit of ${limits.join(' and ')}\n`;
}
