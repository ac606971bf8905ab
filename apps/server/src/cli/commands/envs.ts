import { collectEnvUsage, type EnvUsage } from '@mci/tools';
import type { Command } from 'commander';
import { resolveToolFilePath } from '../tool-file.ts';
import { collectEnvOption, describeLoadError, displayPath, loadCollection } from '../tool-file-loading.ts';
import type { RegisterCommand } from './index.ts';

interface EnvsOptions {
  file?: string;
  format: string;
  env?: Record<string, string>;
}

/**
 * `mci envs [--file F] [--format table|json] [-e KEY=VAL]...`: every `{{env.X}}` the main file, its
 * toolsets and its MCP server configs use, where each is used, and whether it is set (in the process
 * environment or by `-e`). MCP servers are not contacted. Exit 0; 1 when a template cannot be
 * parsed; 2 for usage and load errors.
 */
export const registerEnvs: RegisterCommand = (program: Command) => {
  program
    .command('envs')
    .description('List the environment variables the tools use, where, and whether each is set')
    .option(
      '-f, --file <path>',
      'tool file (default: mci.json, mci.yaml or mci.yml here, else examples/mci.yaml)',
    )
    .option('--format <format>', 'table or json', 'table')
    .option('-e, --env <KEY=VALUE>', 'count a value as set (repeatable)', collectEnvOption)
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .action(async (options: EnvsOptions) => {
      if (options.format !== 'table' && options.format !== 'json') {
        console.error(`error: --format must be table or json, got "${options.format}"`);
        process.exitCode = 2;
        return;
      }
      const file = resolveToolFilePath(options.file);
      let collection: Awaited<ReturnType<typeof loadCollection>>;
      try {
        collection = await loadCollection(file, { env: options.env });
      } catch (error) {
        for (const line of describeLoadError(error)) console.error(line);
        process.exitCode = 2;
        return;
      }
      const { variables, problems } = collectEnvUsage(collection, { ...process.env, ...options.env });
      for (const problem of problems) {
        console.error(`error: ${displayPath(problem.file)} ${problem.field}: ${problem.message}`);
      }
      process.stdout.write(
        options.format === 'json' ? `${JSON.stringify(variables, null, 2)}\n` : table(variables),
      );
      process.exitCode = problems.length > 0 ? 1 : 0;
    });
};

function table(variables: readonly EnvUsage[]): string {
  if (variables.length === 0) return 'No environment variables are used.\n';
  const lines: string[] = [];
  const width = Math.max(...variables.map((v) => v.name.length));
  for (const variable of variables) {
    lines.push(`${variable.name.padEnd(width)}  ${variable.set ? 'set' : 'NOT SET'}`);
    for (const use of variable.usedIn) {
      const from = use.toolset === undefined ? '' : ` (toolset ${use.toolset})`;
      lines.push(`  ${use.field}  ${displayPath(use.file)}${from}`);
    }
  }
  const missing = variables.filter((v) => !v.set).length;
  lines.push('', `${variables.length} variable${variables.length === 1 ? '' : 's'}, ${missing} not set`);
  return `${lines.join('\n')}\n`;
}
