import type { ExecutionError, ExecutionStatus } from './execution.ts';

/**
 * The text a run that did not succeed adds to its stderr, so that a client that reads only stderr
 * sees why (the structured `error` stays in the result):
 *
 * - `failed`: the error the way Node prints an uncaught one, `Name: message` then the program's
 *   own stack frames (`    at snippet.ts:LINE:COL`; one such line from `line`/`column` when the
 *   error has no frame of the program);
 * - `timeout`: `timeout: the run exceeded 30000 ms`;
 * - `canceled`: `canceled: killed by a signal`.
 *
 * Empty for `success`. Always ends with a newline otherwise.
 *
 * @param filename The name the program's frames carry: `snippet.ts` or `snippet.js`.
 */
export function failureText(
  status: ExecutionStatus,
  error: ExecutionError | undefined,
  timeoutMs: number,
  filename: string,
): string {
  if (status === 'success') return '';
  if (status === 'timeout') return `timeout: the run exceeded ${timeoutMs} ms\n`;
  if (status === 'canceled') return 'canceled: killed by a signal\n';
  if (!error) return 'Error: the run failed\n';
  const lines = [`${error.name}: ${error.message}`];
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  if (frames.length > 0) lines.push(...frames.map((frame) => `    ${frame.trim()}`));
  else if (error.line !== undefined) lines.push(`    at ${filename}:${error.line}:${error.column ?? 1}`);
  return `${lines.join('\n')}\n`;
}
