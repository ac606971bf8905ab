import { resolve } from 'node:path';
import { text as readText } from 'node:stream/consumers';
import { inspect } from 'node:util';
import { ProgramChecker } from '@mci/check';
import { encodeOutputValue } from '@mci/protocol';
import { createSandboxPool, type ExecutionResult, SandboxError, type SandboxEvent } from '@mci/sandbox';
import { createToolRunner } from '@mci/tools';
import { Option } from 'commander';
import { checkDeclarations } from '../../check/check-declarations.ts';
import { type CheckOutcome, checkOutcome } from '../../check/check-outcome.ts';
import { ConfigError } from '../../config/config-error.ts';
import { localRedactor, redactingTools } from '../../secrets/server-secrets.ts';
import { createToolCatalog } from '../../tool-search/tool-catalog.ts';
import { withCatalog } from '../../tool-search/with-catalog.ts';
import type { ToolDeclarationSource } from '../../tools-dts/sandbox-globals-dts.ts';
import { defineCommand } from '../command.ts';
import type { CliIo } from '../io.ts';
import {
  allowNetOption,
  envOption,
  langOption,
  memoryOption,
  numberOption,
  toolFileOption,
} from '../options.ts';
import { roundMs, toJsonText } from '../process-format.ts';
import { saveRunFiles } from '../save-files.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { describeLoadError, loadCollection } from '../tool-file-loading.ts';

/** Exit code of a usage error (no snippet on a terminal), as for those commander reports. */
const EXIT_USAGE = 2;

interface RunOptions {
  file?: string;
  timeout?: number;
  memory?: number;
  format: 'json' | 'text';
  lang?: 'ts' | 'js';
  allowNet?: string[];
  env?: Record<string, string>;
  saveFiles?: string;
  check?: 'block' | 'warn' | 'off';
}

/**
 * `mci run [SNIPPET|-] [--file F] [--timeout MS] [--memory MB] [--format json|text] [--lang ts|js] [--allow-net H[:P]]...
 * [--save-files DIR] [--check [block|warn|off]]`: runs one snippet in the sandbox with the tool collection at hand and prints the
 * ExecutionResult (JSON, files as `{name, mimeType, size}`) or a readable summary with the logs
 * streamed live. `--save-files` writes the run's files and pictures to DIR and prints their paths
 * (`saved: PATH` lines on stderr, or `saved` in the JSON). `--check` type-checks the snippet first
 * (docs/sandbox.md): its findings go to stderr (`warnings` in the JSON), and under `block` a snippet
 * with certain errors does not run (`CHECK_FAILED`, exit 1). Exit 0 on success, 1 otherwise (a failed,
 * timed-out or canceled program, a tool file that does not load), 2 for a usage error (a bad option,
 * no snippet on a terminal). Ctrl-C kills the execution.
 */
export default defineCommand<RunOptions, [snippet: string | undefined]>({
  configure(command) {
    command
      .argument('[snippet]', 'the code, or - (the default) to read it from stdin')
      .addOption(toolFileOption())
      .option(
        '-t, --timeout <ms>',
        'wall-clock limit in milliseconds (default 30000)',
        numberOption('--timeout'),
      )
      .addOption(memoryOption())
      .addOption(new Option('--format <format>', 'result format').choices(['json', 'text']).default('text'))
      .option('--lang <lang>', 'language of the snippet: ts or js (default ts)', langOption)
      .addOption(allowNetOption())
      .addOption(envOption('set an environment value for tool templates and commands (repeatable)'))
      .option('--save-files <dir>', "save the run's files and pictures (output.file, output.image) to DIR")
      .addOption(
        new Option(
          '--check [mode]',
          'type-check the snippet first: block (certain errors stop it; the mode of a bare --check), warn, or off (the default)',
        )
          .choices(['block', 'warn', 'off'])
          .preset('block'),
      );
  },
  async run({ args: [snippet], options }, io) {
    const fromStdin = snippet === undefined || snippet === '-';
    if (fromStdin && io.stdin.isTTY) {
      io.stderr.write('error: give the snippet as an argument, or pipe it in (mci run - < file.ts)\n');
      return EXIT_USAGE;
    }
    return run(fromStdin ? await readText(io.stdin) : snippet, options, io).catch((error: unknown) => {
      const lines =
        error instanceof SandboxError || error instanceof ConfigError
          ? [`error: ${error.message}`]
          : describeLoadError(error, io.cwd);
      for (const line of lines) io.stderr.write(`${line}\n`);
      return 1;
    });
  },
});

async function run(code: string, options: RunOptions, io: CliIo): Promise<number> {
  const file = resolveToolFilePath(options.file, io.cwd);
  const collection = await loadCollection(file, { env: io.env, extra: options.env, mcp: true });
  const env = { ...io.env, ...options.env };
  // What the tools read from the environment is secret: it never reaches the terminal.
  const redactor = localRedactor(collection, env);
  await using runner = createToolRunner(collection, { env });
  const text = options.format === 'text';
  const check = checkSnippet(code, options, runner.list());
  if (check.refused) {
    if (text) printCheck(check, io);
    else
      io.stdout.write(
        `${toJsonText({ status: 'failed', error: check.refused, warnings: check.warnings })}\n`,
      );
    return 1;
  }
  if (text) printCheck(check, io);
  await using pool = createSandboxPool({ size: 1, allowNet: options.allowNet ?? [] });
  const execution = pool.execute({
    code,
    lang: options.lang ?? 'ts',
    tools: redactingTools(withCatalog(runner, createToolCatalog(runner.list())), redactor),
    timeoutMs: options.timeout,
    memoryLimitMb: options.memory,
    onEvent: text ? (event) => printEvent(redactor.redactValue(event), io) : undefined,
  });
  const cancel = () => execution.kill();
  io.signals.on('SIGINT', cancel);
  try {
    const result = redactor.redactValue(await execution.result);
    const saved =
      options.saveFiles === undefined
        ? undefined
        : await saveRunFiles(resolve(io.cwd, options.saveFiles), result);
    if (text) {
      for (const path of saved ?? []) io.stderr.write(`saved: ${path}\n`);
      printSummary(result, io);
    } else {
      const outputs = result.outputs.map((value) => redactor.redactValue(encodeOutputValue(value)));
      const files = result.files?.map(({ name, mimeType, data }) => ({
        name,
        mimeType,
        size: data.byteLength,
      }));
      const warnings = check.warnings.length > 0 ? { warnings: check.warnings } : {};
      io.stdout.write(
        `${toJsonText({ ...result, outputs, ...(files && { files }), ...(saved && { saved }), ...warnings })}\n`,
      );
    }
    return result.status === 'success' ? 0 : 1;
  } finally {
    io.signals.off('SIGINT', cancel);
  }
}

/** Checks the snippet in this thread (one check: a worker thread would only add its start-up). */
function checkSnippet(code: string, options: RunOptions, tools: ToolDeclarationSource[]): CheckOutcome {
  const mode = options.check ?? 'off';
  if (mode === 'off') return { warnings: [] };
  const checker = new ProgramChecker(checkDeclarations(tools));
  return checkOutcome(mode, checker.check(code, options.lang ?? 'ts'));
}

function printCheck(check: CheckOutcome, io: CliIo): void {
  for (const d of check.refused?.diagnostics ?? []) io.stderr.write(`error: line ${d.line}: ${d.message}\n`);
  for (const d of check.warnings) io.stderr.write(`warning: line ${d.line}: ${d.message}\n`);
  if (check.refused) io.stderr.write(`failed: ${check.refused.name}: ${check.refused.message}\n`);
}

const show = (value: unknown) => inspect(value, { depth: 6, colors: false, breakLength: 100 });

function printEvent(event: SandboxEvent, io: CliIo): void {
  if (event.type === 'log') (event.stream === 'stderr' ? io.stderr : io.stdout).write(event.text);
  else if (event.type === 'output') io.stdout.write(`output: ${show(event.value)}\n`);
  else if (event.type === 'file')
    io.stdout.write(`file: ${event.name} (${event.mimeType}, ${event.data.byteLength} bytes)\n`);
  else
    io.stderr.write(
      `tool ${event.name} ${event.isError ? 'failed' : 'ok'} (${roundMs(event.durationMs)} ms)\n`,
    );
}

function printSummary(result: ExecutionResult, io: CliIo): void {
  const figures = `${roundMs(result.durationMs)} ms, cpu ${roundMs(result.cpuTimeMs)} ms, heap ${(result.heapUsedBytes / 1024 / 1024).toFixed(1)} MB`;
  const truncated = result.truncated ? ' (outputs or logs truncated)' : '';
  if (result.status === 'success') {
    io.stderr.write(`success in ${figures}${truncated}\n`);
    return;
  }
  const e = result.error;
  const where = e?.line === undefined ? '' : ` at line ${e.line}, column ${e.column}`;
  io.stderr.write(
    `${result.status}${where}: ${e ? `${e.name}: ${e.message}` : ''} (${figures})${truncated}\n`,
  );
}
