import type { ChildProcess } from 'node:child_process';
import { startMci } from './mci.ts';
import { repoRoot } from './paths.ts';

/** Options of {@link spawnServerProcess}. */
export interface ServerProcessOptions {
  /** Arguments after `mci serve --port 0`. @default [] */
  args?: readonly string[];
  /** Variables added to this process's environment (`MCI_API_KEY`, `MCI_DB`, ...). */
  env?: Record<string, string>;
  /** Working directory. @default the repository root */
  cwd?: string;
  /** Start it in a process group of its own (signal the group with `process.kill(-pid)`). @default false */
  detached?: boolean;
}

/** A `mci serve` child process, as {@link spawnServerProcess} started it. */
export interface SpawnedServer {
  child: ChildProcess;
  /** Its base URL (`http://127.0.0.1:PORT`) once it listens; rejects when it exits first. */
  url: Promise<string>;
  /** Its exit code once it exited (null after a signal). */
  exited: Promise<number | null>;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Everything it wrote to stdout so far. */
  stdout(): string;
  /** Sends SIGTERM (SIGKILL after 15 s) and waits for the exit. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** A real `mci serve` that listens: {@link SpawnedServer} with its URL and port known. */
export interface ServerProcess extends Omit<SpawnedServer, 'url'> {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
}

/**
 * Spawns the real `mci serve --port 0 ARGS` from source with warnings-only JSON logs: the one way
 * the suites start a server program. It does not wait for the server to listen (a test of a refused
 * start awaits `exited`); {@link startServerProcess} does.
 */
export function spawnServerProcess(options: ServerProcessOptions = {}): SpawnedServer {
  const child = startMci(['serve', '--port', '0', ...(options.args ?? [])], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, MCI_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  let stderr = '';
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr?.setEncoding('utf8');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (text: string) => {
      stderr += text;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    exited.then((code) => reject(new Error(`mci serve exited with ${code} before listening:\n${stderr}`)));
    child.once('error', reject);
  });
  url.catch(() => {});
  return {
    child,
    url,
    exited,
    stderr: () => stderr,
    stdout: () => stdout,
    async [Symbol.asyncDispose]() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * Spawns `mci serve --port 0 --concurrency 2 ARGS` (see {@link spawnServerProcess}) with a throwaway
 * database (`MCI_DB=:memory:`, unless `env` names another) and resolves once it printed its URL.
 * @throws when the server exits before it listens (the error carries its stderr).
 */
export async function startServerProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const server = spawnServerProcess({
    ...options,
    args: ['--concurrency', '2', ...(options.args ?? [])],
    env: { MCI_DB: ':memory:', ...options.env },
  });
  const url = await server.url;
  return { ...server, url, port: Number(new URL(url).port) };
}
