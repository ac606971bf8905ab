import { collectEnvUsage, type EnvUsage } from '@mci/tools/env-usage';
import { defineCommand } from '../command.ts';
import { collectEnvOption } from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { describeLoadError, displayPath, loadCollection } from '../tool-file-loading.ts';

interface EnvsOptions {
  file?: string;
  format: string;
  env?: Record<string, string>;
}

/**
 * `mci envs [--file F] [--format table|json] [-e KEY=VAL]...`: every `{{env.X}}` the main file, its
 * toolsets and its MCP server configs use, where each is used, and whether it is set (in the
 * environment or by `-e`). MCP servers are not contacted. Exit 0; 1 when a template cannot be
 * parsed; 2 for usage and load errors.
 */
export default defineCommand<EnvsOptions>({
  configure(command) {
    command
      .option(
        '-f, --file <path>',
        'tool file (default: mci.json, mci.yaml or mci.yml here, else examples/mci.yaml)',
      )
      .option('--format <format>', 'table or json', 'table')
      .option('-e, --env <KEY=VALUE>', 'count a value as set (repeatable)', collectEnvOption);
  },
  async run({ options }, io) {
    if (options.format !== 'table' && options.format !== 'json') {
      io.stderr.write(`error: --format must be table or json, got "${options.format}"\n`);
      return 2;
    }
    const file = resolveToolFilePath(options.file, io.cwd);
    let collection: Awaited<ReturnType<typeof loadCollection>>;
    try {
      collection = await loadCollection(file, { env: io.env, extra: options.env });
    } catch (error) {
      for (const line of describeLoadError(error, io.cwd)) io.stderr.write(`${line}\n`);
      return 2;
    }
    const { variables, problems } = collectEnvUsage(collection, { ...io.env, ...options.env });
    for (const problem of problems) {
      io.stderr.write(`error: ${displayPath(problem.file, io.cwd)} ${problem.field}: ${problem.message}\n`);
    }
    io.stdout.write(
      options.format === 'json' ? `${JSON.stringify(variables, null, 2)}\n` : table(variables, io.cwd),
    );
    return problems.length > 0 ? 1 : 0;
  },
});

function table(variables: readonly EnvUsage[], cwd: string): string {
  if (variables.length === 0) return 'No environment variables are used.\n';
  const lines: string[] = [];
  const width = Math.max(...variables.map((v) => v.name.length));
  for (const variable of variables) {
    lines.push(`${variable.name.padEnd(width)}  ${variable.set ? 'set' : 'NOT SET'}`);
    for (const use of variable.usedIn) {
      const from = use.toolset === undefined ? '' : ` (toolset ${use.toolset})`;
      lines.push(`  ${use.field}  ${displayPath(use.file, cwd)}${from}`);
    }
  }
  const missing = variables.filter((v) => !v.set).length;
  lines.push('', `${variables.length} variable${variables.length === 1 ? '' : 's'}, ${missing} not set`);
  return `${lines.join('\n')}\n`;
}
