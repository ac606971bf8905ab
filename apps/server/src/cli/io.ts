import type { Readable, Writable } from 'node:stream';
import type { Env } from '../config/read-setting.ts';

/** A stream `mci` writes to: `process.stdout`/`stderr`, or a collecting stream in tests. */
export type OutputStream = Writable & {
  /** True on a terminal: progress lines are drawn live, logs pretty-printed. */
  readonly isTTY?: boolean | undefined;
};

/** Where `mci` reads its input: `process.stdin`, or a stream of a test's text. */
export type InputStream = Readable & {
  /** True on a terminal: commands that read code from stdin then ask for an argument instead. */
  readonly isTTY?: boolean | undefined;
};

/** Signals a command can react to; `process` is one. */
export interface SignalSource {
  on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  off(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
}

/**
 * Everything a command touches outside its arguments. `mci` itself passes the process's streams,
 * environment, working directory and signals ({@link processIo}); tests pass their own and call the
 * command in-process.
 */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly stdin: InputStream;
  /** Environment variables (`MCI_URL`, `MCI_TOKEN`, ...; tool templates' `{{env.X}}`). */
  readonly env: Env;
  /** Directory relative paths are resolved against. */
  readonly cwd: string;
  /** Ctrl-C (SIGINT) and SIGTERM: a command that handles them removes its listener when done. */
  readonly signals: SignalSource;
  /** Ends the program at once with `code` (`mci serve` on a second Ctrl-C while draining). */
  exit(code: number): void;
}

/** The real process's {@link CliIo}. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signals: process,
    exit: (code) => process.exit(code),
  };
}
