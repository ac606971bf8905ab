import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The monorepo root. */
export const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const MAIN = `${REPO}apps/server/src/cli/main.ts`;

/** A real `mci serve` in a child process, listening on 127.0.0.1 and a free port. */
export interface ServerProcess {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Spawns `mci serve --port 0` from source (the public way to run the server) and resolves once it
 * printed its URL. `env` is added to the environment (`MCI_API_KEY`, `MCI_CLIENT_TOKENS`, ...).
 */
export async function startServerProcess(
  options: { args?: string[]; env?: Record<string, string> } = {},
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@mci/source',
      '--disable-warning=ExperimentalWarning',
      MAIN,
      'serve',
      '--port',
      '0',
      '--concurrency',
      '2',
      ...(options.args ?? []),
    ],
    {
      cwd: REPO,
      env: { ...process.env, MCI_LOG_LEVEL: 'warn', MCI_DB: ':memory:', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stdout?.resume();
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
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    url,
    port: Number(new URL(url).port),
    child,
    stderr: () => stderr,
    async [Symbol.asyncDispose]() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
