import { execa } from 'execa';
import { canceledResult, errorResult, type ToolResult, textResult } from '../tool-result.ts';
import { OutputCollector } from './output-collector.ts';
import { killGroup, trackGroup, untrackGroup } from './process-groups.ts';

/** A command ready to run: everything templated, `cwd` already path-checked. */
export interface CommandSpec {
  command: string;
  args: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  /** Kills the process group after this long; 0 means no limit. */
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is counted and dropped. */
  maxOutputBytes: number;
  /** The child's whole environment. */
  env: Record<string, string | undefined>;
}

/** How much of stderr the error message quotes. */
const ERROR_STDERR_CHARS = 2000;

/**
 * Runs a command with execa, without a shell, as the leader of a new process group. A timeout or an
 * abort kills the whole group with SIGKILL at once. Never throws: exit codes, signals, a command that
 * cannot start, a timeout and cancellation are all results.
 *
 * Metadata: `exit_code`, `stdout_bytes`, `stderr_bytes`, `stderr`; `stdout` on error;
 * `stdout_truncated` / `stderr_truncated` when output went past `maxOutputBytes`.
 */
export async function runCommand(spec: CommandSpec, signal?: AbortSignal): Promise<ToolResult> {
  if (signal?.aborted) return canceledResult(signal.reason);
  const child = execa(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    extendEnv: false,
    detached: true,
    cleanup: false,
    stdin: 'ignore',
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid);
  const stdout = new OutputCollector(child.stdout, spec.maxOutputBytes);
  const stderr = new OutputCollector(child.stderr, spec.maxOutputBytes);
  let timedOut = false;
  const kill = () => {
    if (pid !== undefined) killGroup(pid);
  };
  const timer =
    spec.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, spec.timeoutMs)
      : undefined;
  signal?.addEventListener('abort', kill, { once: true });
  const result = await child;
  clearTimeout(timer);
  signal?.removeEventListener('abort', kill);
  if (pid !== undefined) untrackGroup(pid);

  if (signal?.aborted) return canceledResult(signal.reason);
  const stderrText = stderr.text();
  const stdoutText = stdout.text();
  const metadata: Record<string, unknown> = {
    exit_code: result.exitCode ?? null,
    stdout_bytes: stdout.totalBytes,
    stderr_bytes: stderr.totalBytes,
    stderr: stderrText,
  };
  if (stdout.truncated) metadata.stdout_truncated = true;
  if (stderr.truncated) metadata.stderr_truncated = true;

  if (timedOut) {
    return errorResult(`Command timed out after ${spec.timeoutMs} ms and was killed: ${spec.command}`, {
      ...metadata,
      stdout: stdoutText,
      timed_out: true,
    });
  }
  if (result.exitCode === undefined && result.signal === undefined) {
    // The command never started (ENOENT, EACCES, bad cwd): execa's message says which.
    return errorResult(
      `Command could not be run: ${result.originalMessage || result.shortMessage}`,
      metadata,
    );
  }
  if (result.exitCode !== 0) {
    const how =
      result.exitCode === undefined
        ? `was killed by ${result.signal}`
        : `exited with code ${result.exitCode}`;
    return errorResult(`Command ${how}: ${stderrText.slice(0, ERROR_STDERR_CHARS).trim()}`, {
      ...metadata,
      stdout: stdoutText,
    });
  }
  const output = textResult(stdoutText, metadata);
  if (stdout.truncated) {
    output.content.push({
      type: 'text',
      text: `[output cut: kept ${spec.maxOutputBytes} of ${stdout.totalBytes} bytes]`,
    });
  }
  return output;
}
