import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { Redactor } from '@mci/schema';
import { traceLogFields } from './tracing/log-fields.ts';

export type { Logger };

/** How log lines look: one JSON object per line, or human-readable lines. */
export type LogFormat = 'json' | 'pretty';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  level?: LevelWithSilent;
  /** `pretty`: human-readable lines (pino-pretty, written synchronously). @default 'json' */
  format?: LogFormat;
  /** Pretty lines in color (for a terminal). @default false */
  colors?: boolean;
  /** Where the lines go. @default stdout */
  destination?: DestinationStream;
  /**
   * The server's secret values: every line is redacted (`[redacted:NAME]`) before it is written.
   * Secrets added to it later apply to later lines. @default nothing is redacted
   */
  redactor?: Redactor;
}

/**
 * The server's logger: pino, one line per event (a process transition carries its `pid`); JSON lines
 * for machines, or pretty lines for a person at a terminal. A line written while a span is active
 * carries its `trace_id` and `span_id` (docs/operations.md, "Traces").
 * @see https://getpino.io
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  // No `base` (pino's default adds the OS pid and hostname): `pid` in our lines is a process id.
  const { redactor } = options;
  const settings = {
    name: 'mci-server',
    level: options.level ?? 'info',
    base: undefined,
    // `trace_id` and `span_id` of the active span, when tracing is on.
    mixin: traceLogFields,
    ...(redactor && { hooks: { streamWrite: (line: string) => redactor.redact(line) } }),
  };
  if (options.format === 'pretty') {
    const pretty = PinoPretty({
      sync: true,
      colorize: options.colors === true,
      singleLine: true,
      ignore: 'name',
      translateTime: 'HH:MM:ss.l',
      ...(options.destination && { destination: options.destination }),
    });
    return pino(settings, pretty);
  }
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
