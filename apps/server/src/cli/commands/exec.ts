import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createToolRunner, ToolError } from '@mci/tools';
import { defineCommand } from '../command.ts';
import type { CliIo } from '../io.ts';
import { envOption, toolFileOption } from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { describeLoadError, loadCollection } from '../tool-file-loading.ts';

/** Exit codes of `mci exec`: the tool succeeded, the tool failed, the command could not run it. */
const EXIT_OK = 0;
const EXIT_TOOL_ERROR = 1;
const EXIT_USAGE = 2;

interface ExecOptions {
  file?: string;
  props?: string;
  propsFile?: string;
  env?: Record<string, string>;
}

/** A usage or load problem: its lines go to stderr, exit code 2. */
class UsageError extends Error {
  readonly lines: string[];
  constructor(lines: string[]) {
    super(lines.join('\n'));
    this.lines = lines;
  }
}

/**
 * `mci exec TOOL [--file F] [--props JSON | --props-file F] [-e KEY=VAL]...`: executes one tool and
 * prints its result as JSON. Exit 0 when `isError` is false, 1 when true, 2 for usage and load
 * errors. Ctrl-C cancels the execution (the canceled result is printed).
 */
export default defineCommand<ExecOptions, [tool: string]>({
  configure(command) {
    command
      .argument('<tool>', 'name of the tool')
      .addOption(toolFileOption())
      .option('-p, --props <json>', 'props as JSON, e.g. \'{"city":"Paris"}\'')
      .option('--props-file <path>', 'read the props from a JSON file')
      .addOption(envOption('set an environment value for templates, commands and MCP servers (repeatable)'));
  },
  run({ args: [tool], options }, io) {
    return exec(tool, options, io).catch((error: unknown) => {
      const lines = error instanceof UsageError ? error.lines : [`error: ${(error as Error).message}`];
      for (const line of lines) io.stderr.write(`${line}\n`);
      return EXIT_USAGE;
    });
  },
});

async function exec(toolName: string, options: ExecOptions, io: CliIo): Promise<number> {
  const props = await readProps(options, io.cwd);
  const file = resolveToolFilePath(options.file, io.cwd);
  const collection = await loadCollection(file, { env: io.env, extra: options.env, mcp: true }).catch(
    (error: unknown) => {
      throw new UsageError(describeLoadError(error, io.cwd));
    },
  );
  await using runner = createToolRunner(collection, { env: { ...io.env, ...options.env } });
  const controller = new AbortController();
  const cancel = () => controller.abort();
  io.signals.on('SIGINT', cancel);
  try {
    const result = await runner.execute(toolName, props, { signal: controller.signal });
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return result.isError ? EXIT_TOOL_ERROR : EXIT_OK;
  } catch (error) {
    if (error instanceof ToolError) throw new UsageError([`error: ${error.message}`]);
    throw error;
  } finally {
    io.signals.off('SIGINT', cancel);
  }
}

async function readProps(options: ExecOptions, cwd: string): Promise<unknown> {
  if (options.props !== undefined && options.propsFile !== undefined) {
    throw new UsageError(['error: give either --props or --props-file, not both']);
  }
  if (options.propsFile !== undefined) {
    let text: string;
    try {
      text = await readFile(resolve(cwd, options.propsFile), 'utf8');
    } catch (error) {
      throw new UsageError([
        `error: cannot read --props-file ${options.propsFile}: ${(error as Error).message}`,
      ]);
    }
    return parseJson(text, `--props-file ${options.propsFile}`);
  }
  return options.props === undefined ? {} : parseJson(options.props, '--props');
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError([`error: ${source} is not valid JSON: ${(error as Error).message}`]);
  }
}
