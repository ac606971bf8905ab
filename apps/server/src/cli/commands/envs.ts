import { MIN_SECRET_LENGTH } from '@mci/schema';
import { collectEnvUsage, type EnvUsage } from '@mci/tools/env-usage';
import { loadServerSettings } from '../../config/load-config.ts';
import { defineCommand } from '../command.ts';
import { envOption, toolFileOption } from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { displayPath, loadCollectionOrSay } from '../tool-file-loading.ts';

interface EnvsOptions {
  file?: string;
  config?: string;
  format: string;
  env?: Record<string, string>;
}

/** A variable as `mci envs` lists it: a secret unless the server config lists it in `publicEnv`. */
type ListedVariable = EnvUsage & { secret: boolean };

/**
 * `mci envs [--file F] [--config C] [--format table|json] [-e KEY=VAL]...`: every `{{env.X}}` the main
 * file, its toolsets and its MCP server configs use, where each is used, whether it is set (in the
 * environment or by `-e`), and whether the server treats its value as a secret (all but the config's
 * `publicEnv` and `MCI_PUBLIC_ENV`; docs/security.md), and the default a use has when its template
 * gives one (`{{env.X | 'fallback'}}`). MCP servers are not contacted. Exit 0; 1 when
 * a template cannot be parsed or a secret is set to a value the server refuses (under 8 characters);
 * 2 for usage and load errors.
 */
export default defineCommand<EnvsOptions>({
  configure(command) {
    command
      .addOption(toolFileOption())
      .option('--config <path>', 'server config file whose publicEnv lists variables that are not secrets')
      .option('--format <format>', 'table or json', 'table')
      .addOption(envOption('count a value as set (repeatable)'));
  },
  async run({ options }, io) {
    if (options.format !== 'table' && options.format !== 'json') {
      io.stderr.write(`error: --format must be table or json, got "${options.format}"\n`);
      return 2;
    }
    const file = resolveToolFilePath(options.file, io.cwd);
    const collection = await loadCollectionOrSay(file, { extra: options.env }, io);
    if (!collection) return 2;
    let publicEnv: string[];
    try {
      publicEnv = loadServerSettings(
        options.config === undefined ? {} : { config: options.config },
        io.env,
        io.cwd,
      ).publicEnv;
    } catch (error) {
      io.stderr.write(`error: ${(error as Error).message}\n`);
      return 2;
    }
    const env = { ...io.env, ...options.env };
    const usage = collectEnvUsage(collection, env);
    const { problems } = usage;
    const variables = usage.variables.map((variable) => ({
      ...variable,
      secret: !publicEnv.includes(variable.name),
    }));
    for (const problem of problems) {
      io.stderr.write(`error: ${displayPath(problem.file, io.cwd)} ${problem.field}: ${problem.message}\n`);
    }
    let short = 0;
    for (const { name, secret } of variables) {
      const value = env[name];
      if (!secret || value === undefined || value === '' || value.length >= MIN_SECRET_LENGTH) continue;
      short++;
      io.stderr.write(
        `error: ${name} is a secret of ${value.length} characters; the server refuses secrets under ${MIN_SECRET_LENGTH} (list it in publicEnv if it is not a secret)\n`,
      );
    }
    io.stdout.write(
      options.format === 'json' ? `${JSON.stringify(variables, null, 2)}\n` : table(variables, io.cwd),
    );
    return problems.length > 0 || short > 0 ? 1 : 0;
  },
});

/** Whether every use of `variable` has a default: it needs no value. */
const hasDefaults = (variable: EnvUsage) => variable.usedIn.every((use) => use.default !== undefined);

function table(variables: readonly ListedVariable[], cwd: string): string {
  if (variables.length === 0) return 'No environment variables are used.\n';
  const lines: string[] = [];
  const width = Math.max(...variables.map((v) => v.name.length));
  for (const variable of variables) {
    const set = variable.set ? 'set    ' : 'NOT SET';
    const defaulted = !variable.set && hasDefaults(variable) ? '  (defaults used)' : '';
    lines.push(
      `${variable.name.padEnd(width)}  ${set}  ${variable.secret ? 'secret' : 'public'}${defaulted}`,
    );
    for (const use of variable.usedIn) {
      const from = use.toolset === undefined ? '' : ` (toolset ${use.toolset})`;
      const fallback = use.default === undefined ? '' : `  default ${use.default}`;
      lines.push(`  ${use.field}  ${displayPath(use.file, cwd)}${from}${fallback}`);
    }
  }
  const missing = variables.filter((v) => !v.set);
  const covered = missing.filter(hasDefaults).length;
  const ofThem = covered === 0 ? '' : ` (${covered} with a default wherever used)`;
  lines.push(
    '',
    `${variables.length} variable${variables.length === 1 ? '' : 's'}, ${missing.length} not set${ofThem}`,
  );
  return `${lines.join('\n')}\n`;
}
