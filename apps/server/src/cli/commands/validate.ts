import { collectEnvUsage } from '@mci/tools';
import { resolveToolFilePath } from '../tool-file.ts';
import { collectEnvOption, describeLoadError, displayPath, loadCollection } from '../tool-file-loading.ts';
import type { RegisterCommand } from './index.ts';

interface ValidateOptions {
  file?: string;
  env?: Record<string, string>;
  mcp?: boolean;
}

/**
 * `mci validate`: loads the tool file with its toolsets, checks every template's syntax, and prints a
 * one-line summary (exit 0) or every issue with file, JSON path and line (exit 1).
 */
export const registerValidate: RegisterCommand = (program) => {
  program
    .command('validate')
    .description('Check a tool file, its toolsets and templates; print every problem found')
    .option(
      '-f, --file <path>',
      'tool file (default: mci.json, mci.yaml or mci.yml here, else examples/mci.yaml)',
    )
    .option(
      '-e, --env <KEY=VALUE>',
      'set an environment value for templates and MCP servers (repeatable)',
      collectEnvOption,
    )
    .option('--mcp', "also load MCP servers' tools (from the cache in libraryDir/mcp/, else by connecting)")
    .action(async (options: ValidateOptions) => {
      const file = resolveToolFilePath(options.file);
      let collection: Awaited<ReturnType<typeof loadCollection>>;
      try {
        collection = await loadCollection(file, options);
      } catch (error) {
        for (const line of describeLoadError(error)) console.error(line);
        process.exitCode = 1;
        return;
      }
      const env = { ...process.env, ...options.env };
      const { variables, problems } = collectEnvUsage(collection, env);
      if (problems.length > 0) {
        console.error(`error: ${problems.length} template ${problems.length === 1 ? 'problem' : 'problems'}`);
        for (const problem of problems)
          console.error(`  ${displayPath(problem.file)} ${problem.field}: ${problem.message}`);
        process.exitCode = 1;
        return;
      }
      if (collection.kind === 'toolset') {
        const count = collection.tools.length;
        const servers = (collection.mcpServerNames ?? []).map((name) => `"${name}"`).join(', ');
        const what = collection.expiresAt
          ? `a cached MCP toolset (expiresAt ${collection.expiresAt})`
          : 'a toolset file';
        console.log(
          `${displayPath(file)} is ${what}, checked on its own: ${count} tool${count === 1 ? '' : 's'} valid`,
        );
        if (servers) {
          console.log(
            `  its tools call MCP server ${servers}: the main file that lists this toolset declares it in mcp_servers`,
          );
        }
        return;
      }
      const toolsets = collection.toolsets.length;
      const declared = Object.keys(collection.mcpServers).length;
      const servers =
        declared === 0 ? '' : options.mcp ? `, ${declared} MCP server${declared === 1 ? '' : 's'}` : '';
      const count = collection.tools.length;
      console.log(
        `${displayPath(file)} is valid: ${count} tool${count === 1 ? '' : 's'} from ${toolsets} toolset${toolsets === 1 ? '' : 's'}${servers}`,
      );
      if (declared > 0 && !options.mcp) {
        console.log(
          `  ${declared} MCP server${declared === 1 ? '' : 's'} skipped (use --mcp to load their tools)`,
        );
      }
      const unset = variables.filter((variable) => !variable.set).map((variable) => variable.name);
      if (unset.length > 0) {
        console.log(
          `  env not set: ${unset.join(', ')} (fine where the template has a fallback; set with -e KEY=VALUE)`,
        );
      }
    });
};
