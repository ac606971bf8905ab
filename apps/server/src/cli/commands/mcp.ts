import { matchesToolFilter, type ToolFilter } from '@mci/schema';
import { createToolRunner } from '@mci/tools';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { LevelWithSilent } from 'pino';
import { createLogger } from '../../logger.ts';
import { serveMcpStdio } from '../../mcp/stdio-server.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import {
  collectEnvOption,
  collectFilterOption,
  describeLoadError,
  loadCollection,
} from '../tool-file-loading.ts';
import type { RegisterCommand } from './index.ts';

interface McpOptions {
  file?: string;
  filter?: ToolFilter[];
  env?: Record<string, string>;
  allowNet?: string[];
  timeout?: number;
  memory?: number;
  concurrency?: number;
  logLevel: LevelWithSilent;
}

const positiveInteger = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new InvalidArgumentError(`${name} must be a positive integer`);
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `mci mcp`: an MCP server on stdin/stdout (`run_code` and every tool of the tool file, as MCP tools;
 * long runs as MCP tasks). Logs go to stderr. Exit 0 when the client closes stdin, 1 when the tool
 * file does not load.
 * @see docs/mcp.md
 */
export const registerMcp: RegisterCommand = (program: Command) => {
  program
    .command('mcp')
    .description('Serve run_code and the tools over MCP on stdin/stdout (logs on stderr)')
    .option(
      '-f, --file <path>',
      'tool file (default: mci.json, mci.yaml or mci.yml here, else examples/mci.yaml)',
    )
    .option(
      '--filter <kind:values>',
      'only:a,b | except:a | tags:x,y | withoutTags:x | toolsets:s (repeatable, combined with AND)',
      collectFilterOption,
    )
    .option(
      '-t, --timeout <ms>',
      'default run timeout in milliseconds (default 30000)',
      positiveInteger('--timeout'),
    )
    .option('-m, --memory <mb>', 'isolate memory limit in MB (default 128)', positiveInteger('--memory'))
    .option('--concurrency <n>', 'sandbox workers (default 2)', positiveInteger('--concurrency'))
    .option('--allow-net <host[:port]>', 'let fetch reach this loopback/private host (repeatable)', collect)
    .option(
      '-e, --env <KEY=VALUE>',
      'set an environment value for tool templates and commands (repeatable)',
      collectEnvOption,
    )
    .addOption(
      new Option('--log-level <level>', 'level of the log lines on stderr')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .env('MCI_LOG_LEVEL')
        .default('info'),
    )
    .action(async (options: McpOptions) => {
      const logger = createLogger({ level: options.logLevel, destination: process.stderr });
      let collection: Awaited<ReturnType<typeof loadCollection>>;
      try {
        collection = await loadCollection(resolveToolFilePath(options.file), { env: options.env, mcp: true });
      } catch (error) {
        for (const line of describeLoadError(error)) process.stderr.write(`${line}\n`);
        process.exitCode = 1;
        return;
      }
      const tools = collection
        .list()
        .filter((tool) => (options.filter ?? []).every((filter) => matchesToolFilter(tool, filter)));
      await serveMcpStdio({
        runner: createToolRunner(collection, { env: options.env ?? {} }),
        tools,
        stdin: process.stdin,
        stdout: process.stdout,
        logger,
        ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
        ...(options.allowNet !== undefined && { allowNet: options.allowNet }),
        ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
        ...(options.memory !== undefined && { memoryLimitMb: options.memory }),
      });
    });
};
