import type { ChildProcess } from 'node:child_process';
import { startMci } from './mci.ts';
import { repoRoot } from './paths.ts';

/** A real `mci serve` in a child process, listening on 127.0.0.1 and a free port. */
export interface ServerProcess {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | NodeJS.Signals>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Spawns `mci serve --port 0 --concurrency 2 ARGS` from source (the public way to run the server) in
 * the repository root, with a throwaway database (`MCI_DB=:memory:`) and warnings-only JSON logs, and
 * resolves once it printed its URL. `env` is added to the environment (`MCI_API_KEY`, `MCI_DB`, ...).
 * Disposing sends SIGTERM (SIGKILL after 15 s) and waits for the exit.
 */
export async function startServerProcess(
  options: { args?: string[]; env?: Record<string, string>; cwd?: string } = {},
): Promise<ServerProcess> {
  const child = startMci(['serve', '--port', '0', '--concurrency', '2', ...(options.args ?? [])], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, MCI_LOG_LEVEL: 'warn', MCI_DB: ':memory:', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout?.resume();
  const exited = new Promise<number | NodeJS.Signals>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      stderr += text;
      const match = /MCI server listening on (http:\/\/[^\s]+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) =>
      reject(new Error(`mci serve exited with ${code} before listening:\n${stderr}`)),
    );
    child.once('error', reject);
  });
  return {
    url,
    port: Number(new URL(url).port),
    child,
    stderr: () => stderr,
    exited,
    async [Symbol.asyncDispose]() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
