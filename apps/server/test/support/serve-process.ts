import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { request } from './http.ts';

// `mci serve` as a child process (from source) on port 0, for tests of whole servers: its URL once it
// listens, its output, and an HTTP helper. Every server still running after the suite is killed.

const main = join(dirname(fileURLToPath(import.meta.url)), '../../src/cli/main.ts');

/** A JSON body as the tests read it. */
export type Json = Record<string, any>;

/** A running `mci serve`. */
export interface ServeProcess {
  child: ChildProcess;
  /** Its base URL once it listens (rejects when it exits first). */
  url: Promise<string>;
  /** Its exit code (null after a signal). */
  exited: Promise<number | null>;
  stderr(): string;
  stdout(): string;
}

/** `serve(args, env)` starts `mci serve --port 0 ARGS` in `cwd`; `http` sends one JSON request. */
export function serveProcesses(cwd: string) {
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  function serve(args: string[], env: Record<string, string> = {}): ServeProcess {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@mci/source',
        '--disable-warning=ExperimentalWarning',
        main,
        'serve',
        '--port',
        '0',
        ...args,
      ],
      { cwd, env: { ...process.env, MCI_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let stderr = '';
    let stdout = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', () => {
        const match = /listening on (http:\/\/\S+)/.exec(stderr);
        if (match) resolve(match[1]!);
      });
      exited.then((code) => reject(new Error(`mci serve exited ${code}: ${stderr}`)));
    });
    url.catch(() => {});
    return { child, url, exited, stderr: () => stderr, stdout: () => stdout };
  }

  return { serve, http: request };
}
