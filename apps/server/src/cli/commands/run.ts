import { text as readStream } from 'node:stream/consumers';
import { inspect } from 'node:util';
import { createSandboxPool, type ExecutionResult, SandboxError, type SandboxEvent } from '@mci/sandbox';
import { createToolRunner } from '@mci/tools';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { resolveToolFilePath } from '../tool-file.ts';
import { collectEnvOption, describeLoadError, loadCollection } from '../tool-file-loading.ts';
import type { RegisterCommand } from './index.ts';

interface RunOptions {
  file?: string;
  timeout?: number;
  memory?: number;
  format: 'json' | 'text';
  lang: string;
  allowNet?: string[];
  env?: Record<string, string>;
}

const positiveInteger = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new InvalidArgumentError(`${name} must be a positive integer`);
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `mci run [SNIPPET|-] [--file F] [--timeout MS] [--memory MB] [--format json|text] [--allow-net H[:P]]...`:
 * runs one snippet in the sandbox with the tool collection at hand and prints the ExecutionResult
 * (JSON) or a readable summary with the logs streamed live. Exit 0 on success, 1 otherwise (a failed,
 * timed-out or canceled program, or a tool file that does not load). Ctrl-C kills the execution.
 */
export const registerRun: RegisterCommand = (program: Command) => {
  program
    .command('run')
    .description(
      'Run a TypeScript snippet in the sandbox with the tools at hand (exit 0 on success, 1 otherwise)',
    )
    .argument('[snippet]', 'the code, or - (the default) to read it from stdin')
    .option(
      '-f, --file <path>',
      'tool file (default: mci.json, mci.yaml or mci.yml here, else examples/mci.yaml)',
    )
    .option(
      '-t, --timeout <ms>',
      'wall-clock limit in milliseconds (default 30000)',
      positiveInteger('--timeout'),
    )
    .option('-m, --memory <mb>', 'isolate memory limit in MB (default 128)', positiveInteger('--memory'))
    .addOption(new Option('--format <format>', 'result format').choices(['json', 'text']).default('text'))
    .addOption(new Option('--lang <lang>', 'language of the snippet').choices(['ts', 'js']).default('ts'))
    .option('--allow-net <host[:port]>', 'let fetch reach this loopback/private host (repeatable)', collect)
    .option(
      '-e, --env <KEY=VALUE>',
      'set an environment value for tool templates and commands (repeatable)',
      collectEnvOption,
    )
    .action(async (snippet: string | undefined, options: RunOptions) => {
      process.exitCode = await run(snippet, options).catch((error: unknown) => {
        const lines = error instanceof SandboxError ? [`error: ${error.message}`] : describeLoadError(error);
        for (const line of lines) console.error(line);
        return 1;
      });
    });
};

async function run(snippet: string | undefined, options: RunOptions): Promise<number> {
  const code = snippet === undefined || snippet === '-' ? await readStdin() : snippet;
  const collection = await loadCollection(resolveToolFilePath(options.file), { env: options.env, mcp: true });
  await using tools = createToolRunner(collection, { env: options.env ?? {} });
  await using pool = createSandboxPool({ size: 1, allowNet: options.allowNet ?? [] });
  const text = options.format === 'text';
  const execution = pool.execute({
    code,
    lang: options.lang,
    tools,
    timeoutMs: options.timeout,
    memoryLimitMb: options.memory,
    onEvent: text ? printEvent : undefined,
  });
  const cancel = () => execution.kill();
  process.once('SIGINT', cancel);
  try {
    const result = await execution.result;
    if (text) printSummary(result);
    else process.stdout.write(`${JSON.stringify(toJson(result), null, 2)}\n`);
    return result.status === 'success' ? 0 : 1;
  } finally {
    process.off('SIGINT', cancel);
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new SandboxError(
      'INVALID_REQUEST',
      'give the snippet as an argument, or pipe it in (mci run - < file.ts)',
    );
  }
  return readStream(process.stdin);
}

const show = (value: unknown) => inspect(value, { depth: 6, colors: false, breakLength: 100 });

function printEvent(event: SandboxEvent): void {
  if (event.type === 'log') (event.stream === 'stderr' ? process.stderr : process.stdout).write(event.text);
  else if (event.type === 'output') process.stdout.write(`output: ${show(event.value)}\n`);
  else
    process.stderr.write(
      `tool ${event.name} ${event.isError ? 'failed' : 'ok'} (${event.durationMs.toFixed(1)} ms)\n`,
    );
}

function printSummary(result: ExecutionResult): void {
  const figures = `${result.durationMs.toFixed(1)} ms, cpu ${result.cpuTimeMs.toFixed(1)} ms, heap ${(result.heapUsedBytes / 1024 / 1024).toFixed(1)} MB`;
  const truncated = result.truncated ? ' (outputs or logs truncated)' : '';
  if (result.status === 'success') {
    process.stderr.write(`success in ${figures}${truncated}\n`);
    return;
  }
  const e = result.error;
  const where = e?.line === undefined ? '' : ` at line ${e.line}, column ${e.column}`;
  process.stderr.write(
    `${result.status}${where}: ${e ? `${e.name}: ${e.message}` : ''} (${figures})${truncated}\n`,
  );
}

/**
 * The JSON form of a result: outputs are structured clones, so Map and Set become arrays (of entries
 * for a Map), bigint a decimal string, typed arrays arrays of numbers, errors `{ name, message }`.
 */
export function toJson(result: ExecutionResult): unknown {
  return JSON.parse(
    JSON.stringify(result, function (this: unknown, key: string, value: unknown) {
      const raw = (this as Record<string, unknown>)[key];
      if (typeof raw === 'bigint') return raw.toString();
      if (raw instanceof Map) return [...raw];
      if (raw instanceof Set) return [...raw];
      if (ArrayBuffer.isView(raw) && !(raw instanceof DataView))
        return Array.from(raw as unknown as ArrayLike<number>);
      if (raw instanceof Error) return { name: raw.name, message: raw.message };
      return value;
    }),
  );
}
