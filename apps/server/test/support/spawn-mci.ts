import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The real `mci` command line, spawned as a user would run it (real exit codes, real output).
const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** The outcome of one `mci` run. */
export interface MciRun {
  /** Exit code; -1 when the process did not exit by itself (killed, e.g. at the 60 s timeout, or not started). */
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mci ARGS` from source in a child Node process, in `cwd`, with `env` added to this process's
 * environment and `input` on its stdin (then end of file); never rejects (a non-zero exit is in
 * `code`).
 */
export function mci(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  input = '',
): Promise<MciRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--conditions=@mci/source', '--disable-warning=ExperimentalWarning', main, ...args],
      { cwd, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(input);
  });
}
