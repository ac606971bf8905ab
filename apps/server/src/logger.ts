import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';

export type { Logger };

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  level?: LevelWithSilent;
  /** Where JSON lines go. @default stdout */
  destination?: DestinationStream;
}

/**
 * The server's logger: pino JSON lines, one per event (a process transition carries its `pid`).
 * @see https://getpino.io
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  // No `base` (pino's default adds the OS pid and hostname): `pid` in our lines is a process id.
  const settings = { name: 'mci-server', level: options.level ?? 'info', base: undefined };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
