import { collectEnvUsage } from '@mci/tools/env-usage';
import { defineCommand } from '../command.ts';
import { envOption, toolFileOption } from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { displayPath, loadCollectionOrSay, mcpToolsOption } from '../tool-file-loading.ts';

interface ValidateOptions {
  file?: string;
  env?: Record<string, string>;
  mcp?: boolean;
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/**
 * `mci validate`: loads the tool file with its toolsets, checks every template's syntax, and prints a
 * one-line summary (exit 0) or every issue with file, JSON path and line (exit 1).
 */
export default defineCommand<ValidateOptions>({
  configure(command) {
    command
      .addOption(toolFileOption())
      .addOption(envOption('set an environment value for templates and MCP servers (repeatable)'))
      .addOption(mcpToolsOption());
  },
  async run({ options }, io) {
    const file = resolveToolFilePath(options.file, io.cwd);
    const say = (line: string) => io.stdout.write(`${line}\n`);
    const complain = (line: string) => io.stderr.write(`${line}\n`);
    const collection = await loadCollectionOrSay(file, { extra: options.env, mcp: options.mcp }, io);
    if (!collection) return 1;
    const { variables, problems } = collectEnvUsage(collection, { ...io.env, ...options.env });
    if (problems.length > 0) {
      complain(`error: ${problems.length} template ${problems.length === 1 ? 'problem' : 'problems'}`);
      for (const problem of problems)
        complain(`  ${displayPath(problem.file, io.cwd)} ${problem.field}: ${problem.message}`);
      return 1;
    }
    if (collection.kind === 'toolset') {
      const servers = (collection.mcpServerNames ?? []).map((name) => `"${name}"`).join(', ');
      const what = collection.expiresAt
        ? `a cached MCP toolset (expiresAt ${collection.expiresAt})`
        : 'a toolset file';
      say(
        `${displayPath(file, io.cwd)} is ${what}, checked on its own: ${plural(collection.tools.length, 'tool')} valid`,
      );
      if (servers) {
        say(
          `  its tools call MCP server ${servers}: the main file that lists this toolset declares it in mcp_servers`,
        );
      }
      return 0;
    }
    const declared = Object.keys(collection.mcpServers).length;
    const servers = declared > 0 && options.mcp ? `, ${plural(declared, 'MCP server')}` : '';
    say(
      `${displayPath(file, io.cwd)} is valid: ${plural(collection.tools.length, 'tool')} from ${plural(collection.toolsets.length, 'toolset')}${servers}`,
    );
    if (declared > 0 && !options.mcp)
      say(`  ${plural(declared, 'MCP server')} skipped (use --mcp to load their tools)`);
    const unset = variables.filter((variable) => !variable.set);
    const defaulted = (variable: (typeof unset)[number]) =>
      variable.usedIn.every((use) => use.default !== undefined);
    const needed = unset.filter((variable) => !defaulted(variable)).map(({ name }) => name);
    const withDefaults = unset.filter(defaulted).map(({ name }) => name);
    if (needed.length > 0) say(`  env not set: ${needed.join(', ')} (set with -e KEY=VALUE)`);
    if (withDefaults.length > 0)
      say(`  env not set, the templates' defaults are used: ${withDefaults.join(', ')}`);
    return 0;
  },
});
