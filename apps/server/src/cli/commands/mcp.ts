import type { Redactor } from '@mci/schema';
import { matchesToolFilter, type ToolFilter } from '@mci/schema';
import { createToolRunner } from '@mci/tools';
import { Option } from 'commander';
import type { LevelWithSilent } from 'pino';
import { LOG_LEVELS } from '../../config/config-schema.ts';
import { readEnvChoice } from '../../config/read-setting.ts';
import { startIdleCollector } from '../../idle-collector.ts';
import { createLogger } from '../../logger.ts';
import { serveMcpStdio } from '../../mcp/stdio-server.ts';
import { localRedactor } from '../../secrets/server-secrets.ts';
import { defineCommand } from '../command.ts';
import { allowNetOption, envOption, memoryOption, numberOption, toolFileOption } from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { loadCollectionOrSay, toolFilterOption } from '../tool-file-loading.ts';

interface McpOptions {
  file?: string;
  filter?: ToolFilter[];
  env?: Record<string, string>;
  allowNet?: string[];
  timeout?: number;
  memory?: number;
  concurrency?: number;
  logLevel?: LevelWithSilent;
}

/**
 * `mci mcp`: an MCP server on stdin/stdout (`run_code` and every tool of the tool file, as MCP tools;
 * long runs as MCP tasks). Logs go to stderr. Exit 0 when the client closes stdin, 1 when the tool
 * file does not load.
 * @see docs/mcp.md
 */
export default defineCommand<McpOptions>({
  configure(command) {
    command
      .addOption(toolFileOption())
      .addOption(toolFilterOption())
      .option(
        '-t, --timeout <ms>',
        'default run timeout in milliseconds (default 30000)',
        numberOption('--timeout'),
      )
      .addOption(memoryOption())
      .option('--concurrency <n>', 'sandbox workers (default 2)', numberOption('--concurrency'))
      .addOption(allowNetOption())
      .addOption(envOption('set an environment value for tool templates and commands (repeatable)'))
      .addOption(
        new Option(
          '--log-level <level>',
          'level of the log lines on stderr (env MCI_LOG_LEVEL; default info)',
        ).choices(LOG_LEVELS),
      );
  },
  async run({ options }, io) {
    const level = options.logLevel ?? readEnvChoice(io.env, 'MCI_LOG_LEVEL', LOG_LEVELS) ?? 'info';
    const file = resolveToolFilePath(options.file, io.cwd);
    const collection = await loadCollectionOrSay(file, { extra: options.env, mcp: true }, io);
    if (!collection) return 1;
    let redactor: Redactor;
    try {
      redactor = localRedactor(collection, { ...io.env, ...options.env });
    } catch (error) {
      io.stderr.write(`mci mcp: ${(error as Error).message}\n`);
      return 2;
    }
    const logger = createLogger({ level, destination: io.stderr, redactor });
    const tools = collection
      .list()
      .filter((tool) => (options.filter ?? []).every((filter) => matchesToolFilter(tool, filter)));
    const collector = startIdleCollector({
      onCollect: (collection) => logger.debug(collection, 'idle: heap collected and shrunk'),
    });
    await serveMcpStdio({
      runner: createToolRunner(collection, { env: { ...io.env, ...options.env } }),
      redactor,
      tools,
      stdin: io.stdin,
      stdout: io.stdout,
      logger,
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      ...(options.allowNet !== undefined && { allowNet: options.allowNet }),
      ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
      ...(options.memory !== undefined && { memoryLimitMb: options.memory }),
    }).finally(() => collector.stop());
    return 0;
  },
});
