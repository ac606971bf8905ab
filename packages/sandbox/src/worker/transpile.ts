import amaro from 'amaro';
import type { RunConfig } from '../bootstrap/bootstrap.ts';
import type { ExecutionError } from '../execution.ts';

/**
 * The wrapper around submitted code: the first line hands the program, as an async function, to the
 * bootstrap's one-shot `__mci_run__` with its configuration; compiled with `lineOffset: -1`, so the
 * submitted code keeps its own line numbers. The script's value is the run's outcome promise.
 */
const prefix = (config: RunConfig) =>
  `__mci_run__(${JSON.stringify(config)}, async function () { 'use strict';\n`;
const SUFFIX = '\n})';

/** Line offset to pass to `compileScript` so positions refer to the submitted code. */
export const LINE_OFFSET = -1;

/** The script to compile for one execution. */
export interface PreparedSource {
  /** The script: the submitted code as the body of an async function given to the bootstrap. */
  source: string;
  /** The submitted code as it runs (types stripped), without the wrapper. */
  body: string;
  /** `snippet.ts` or `snippet.js`: the name stack traces use. */
  filename: string;
}

const MODULE_SYNTAX =
  /cannot be used outside of module code|Cannot use import statement outside a module|Unexpected token 'export'/;

/** The message for any attempt to use modules in the sandbox. */
export const NO_MODULES =
  'import/export are not available in the sandbox (there are no modules): use the globals tools, fetch, output and console instead';

/**
 * Wraps `code` as the body of an async function and, for TypeScript, strips the types with amaro
 * (`strip-only`: types become spaces, so every line and column stays where it was).
 *
 * @throws ExecutionError-shaped `{ name: 'SyntaxError', message, line, column }` for code amaro
 *   rejects (a syntax error, or TypeScript that needs a transform such as `enum`).
 */
export function prepareSource(code: string, lang: 'ts' | 'js', config: RunConfig): PreparedSource {
  const head = prefix(config);
  const wrapped = head + code + SUFFIX;
  const filename = lang === 'ts' ? 'snippet.ts' : 'snippet.js';
  if (lang === 'js') return { source: wrapped, body: code, filename };
  try {
    const source = amaro.transformSync(wrapped, { mode: 'strip-only' }).code;
    // Strip-only keeps every position, so the code is where it was.
    return { source, body: source.slice(head.length, source.length - SUFFIX.length), filename };
  } catch (e) {
    const err = e as { message?: unknown; startLine?: unknown; startColumn?: unknown };
    const message = String(err.message ?? e);
    const error: ExecutionError = {
      name: 'SyntaxError',
      message: MODULE_SYNTAX.test(message) ? NO_MODULES : message,
    };
    if (typeof err.startLine === 'number' && typeof err.startColumn === 'number') {
      error.line = Math.max(1, err.startLine + LINE_OFFSET);
      error.column = err.startColumn + 1;
    }
    throw error;
  }
}

const AsyncFunction = (async () => {}).constructor as new (body: string) => unknown;

/**
 * Checks that the program stays inside the function it runs in: its code must parse as a function
 * body on its own, so it cannot close the wrapper early and run code (or declare a function such as
 * `__mci_run__`) outside it, which would let it choose its own outcome. V8's `AsyncFunction`
 * constructor parses the body apart from the function around it; it compiles, never runs, the code.
 *
 * @throws ExecutionError-shaped `{ name: 'SyntaxError', message }` when the code leaves the body.
 */
export function checkFunctionBody(prepared: PreparedSource): void {
  try {
    new AsyncFunction(`'use strict';\n${prepared.body}`);
  } catch (e) {
    const error: ExecutionError = {
      name: 'SyntaxError',
      message: `The code must be the body of a function and cannot close it (${e instanceof Error ? e.message : String(e)})`,
    };
    throw error;
  }
}

/**
 * Keeps a stack's message and the program's own frames: drops bootstrap, isolated-vm and worker
 * frames, and the wrapper line's frame (`at snippet.ts`, line 0, which has no position).
 */
export function cleanStack(stack: string, filename: string): string {
  return stack
    .split('\n')
    .filter((line) => !/^\s+at /.test(line) || new RegExp(`${filename.replace('.', '\\.')}:[1-9]`).test(line))
    .join('\n');
}

/**
 * Turns an error thrown by compiling or running the program into an {@link ExecutionError}: reads
 * the position from isolated-vm's `[file:line:column]` suffix or from the first stack frame in the
 * snippet, and drops bootstrap frames from the stack.
 */
export function toExecutionError(
  data: { name?: unknown; message?: unknown; stack?: unknown },
  filename: string,
): ExecutionError {
  let message = typeof data.message === 'string' ? data.message : String(data.message);
  const name = typeof data.name === 'string' && data.name !== '' ? data.name : 'Error';
  const error: ExecutionError = { name, message };
  const suffix = /\s*\[([^\]]*):(\d+):(\d+)\]$/.exec(message);
  if (suffix) {
    message = message.slice(0, suffix.index);
    if (suffix[1] === filename) {
      error.line = Number(suffix[2]);
      error.column = Number(suffix[3]);
    }
  }
  if (MODULE_SYNTAX.test(message) || (message === 'Not supported' && name === 'Error')) message = NO_MODULES;
  error.message = message;
  if (typeof data.stack === 'string') {
    error.stack = cleanStack(data.stack, filename);
    if (error.line === undefined) {
      const escaped = filename.replace('.', '\\.');
      const frame = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(error.stack);
      if (frame) {
        error.line = Number(frame[1]);
        error.column = Number(frame[2]);
      }
    }
  }
  return error;
}

/** Whether `e` is an {@link ExecutionError} as `prepareSource` throws it (data, not an `Error`). */
export function isExecutionError(e: unknown): e is ExecutionError {
  return typeof e === 'object' && e !== null && !(e instanceof Error) && 'name' in e && 'message' in e;
}
