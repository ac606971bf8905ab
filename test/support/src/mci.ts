import { type ChildProcess, execFile, type SpawnOptions, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable, Writable } from 'node:stream';
import { repoRoot } from './paths.ts';

/** The outcome of one `mci` run. */
export interface MciRun {
  /** Exit code; -1 when a spawned `mci` did not exit by itself (killed, e.g. at its timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link mci} and {@link spawnMci}. */
export interface MciOptions {
  /** Working directory. @default process.cwd() */
  cwd?: string;
  /** Variables added to this process's environment (an empty value unsets one for `mci`). */
  env?: Record<string, string>;
  /** Standard input (chunks arrive one by one), then end of file. @default '' */
  input?: string | readonly string[];
  /** In-process only: the signals `mci` sees (emit `SIGINT` on it for a Ctrl-C). */
  signals?: EventEmitter;
  /** In-process only: stdout and stderr say they are a terminal. @default false */
  tty?: boolean;
  /** In-process only: called with each piece of stderr as it is written. */
  onStderr?: (text: string) => void;
}

/** The TypeScript entry of the `mci` command line. */
export const mciMain = join(repoRoot, 'apps', 'server', 'src', 'cli', 'main.ts');

/**
 * The streams, environment and signals `mci` runs with (the shape of `CliIo` in
 * `@mci/server/cli`, which this package does not depend on: the server's own tests use it).
 */
export interface TestIo {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  env: Record<string, string | undefined>;
  cwd: string;
  signals: EventEmitter;
  exit(code: number): void;
}

/** `runMci` of `@mci/server/cli`. */
export type RunMci = (args: readonly string[], io: TestIo) => Promise<number>;

/** `node` arguments that run `mci ARGS` from source. */
export function mciArgv(args: readonly string[]): string[] {
  return ['--conditions=@mci/source', '--disable-warning=ExperimentalWarning', mciMain, ...args];
}

/**
 * Runs `mci ARGS` in this process through `runMci` (pass the one of `@mci/server/cli`), as the real
 * program would run with the given directory, environment and stdin (not a terminal); never rejects
 * for a non-zero exit. Its output is captured.
 */
export async function mciInProcess(
  runMci: RunMci,
  args: readonly string[],
  options: MciOptions = {},
): Promise<MciRun> {
  let stdout = '';
  let stderr = '';
  let exited: number | undefined;
  const io: TestIo = {
    stdout: collector((text) => (stdout += text), options.tty),
    stderr: collector((text) => {
      stderr += text;
      options.onStderr?.(text);
    }, options.tty),
    stdin: Readable.from(chunks(options.input)),
    env: { ...process.env, ...options.env },
    cwd: options.cwd ?? process.cwd(),
    signals: options.signals ?? new EventEmitter(),
    exit: (code) => {
      exited = code;
    },
  };
  const code = await runMci(args, io);
  return { code: exited ?? code, stdout, stderr };
}

/**
 * Runs the real `mci` program (from source, in a child Node process) and collects its output; for
 * what only a process shows: exit codes, signals, stdin, a terminal. Never rejects (a non-zero exit
 * is in `code`); gives up after 60 s.
 */
export function spawnMci(args: readonly string[], options: MciOptions = {}): Promise<MciRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      mciArgv(args),
      { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    for (const chunk of chunks(options.input)) child.stdin?.write(chunk);
    child.stdin?.end();
  });
}

/** A stream that hands what is written to `take`, synchronously. */
const collector = (take: (text: string) => void, tty = false): Writable =>
  Object.assign(
    new Writable({
      decodeStrings: false,
      write(chunk: string | Buffer, _encoding, done) {
        take(chunk.toString());
        done();
      },
    }),
    { isTTY: tty },
  );

const chunks = (input: string | readonly string[] | undefined): string[] =>
  (typeof input === 'string' ? [input] : [...(input ?? [])]).filter((chunk) => chunk !== '');

/** Starts the real `mci ARGS` as a child process with `spawn` options, for tests that drive it. */
export function startMci(args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, mciArgv(args), options);
}

/**
 * The URLs of every module the real `mci ARGS` loads (through a module hook), for checks that a
 * command does not import what it does not need.
 */
export async function modulesLoadedBy(args: readonly string[], options: MciOptions = {}): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-trace-'));
  try {
    const file = join(dir, 'modules.txt');
    const trace = fileURLToPath(new URL('./trace-imports.ts', import.meta.url));
    const run = await spawnMci(args, {
      ...options,
      env: { ...options.env, MCI_TRACE_IMPORTS: file, NODE_OPTIONS: `--import=${trace}` },
    });
    if (run.code !== 0) throw new Error(`mci ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return readFileSync(file, 'utf8').trim().split('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
