import { matchesToolFilter, type ResolvedTool, type ToolFilter } from '@mci/schema';
import { Option } from 'commander';
import { stringify } from 'yaml';
import { defineCommand } from '../command.ts';
import { envOption, toolFileOption } from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';
import { loadCollectionOrSay, mcpToolsOption, toolFilterOption } from '../tool-file-loading.ts';

interface ListOptions {
  file?: string;
  env?: Record<string, string>;
  filter?: ToolFilter[];
  format: 'table' | 'json' | 'yaml';
  mcp?: boolean;
}

/** What `mci list --format json|yaml` prints for each tool (absent fields are `null`). */
export function describeTool(tool: ResolvedTool) {
  return {
    name: tool.name,
    title: tool.title ?? tool.annotations?.title ?? null,
    description: tool.description ?? null,
    tags: tool.tags,
    annotations: tool.annotations ?? null,
    inputSchema: tool.inputSchema ?? null,
    toolset: tool.toolset ?? null,
  };
}

const DESCRIPTION_WIDTH = 60;

function table(tools: readonly ResolvedTool[]): string {
  const rows = tools.map((tool) => {
    const description = (tool.description ?? tool.title ?? '').replace(/\s+/g, ' ').trim();
    return [
      tool.name,
      tool.toolset ?? '-',
      tool.execution.type,
      tool.tags.join(',') || '-',
      description.length > DESCRIPTION_WIDTH
        ? `${description.slice(0, DESCRIPTION_WIDTH - 1)}…`
        : description,
    ];
  });
  const all = [['NAME', 'TOOLSET', 'TYPE', 'TAGS', 'DESCRIPTION'], ...rows];
  const widths = all[0]!.map((_, column) => Math.max(...all.map((row) => row[column]!.length)));
  return all
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * `mci list`: the enabled tools of a tool file, optionally filtered (`--filter` repeatable, combined
 * with AND), as a table, JSON or YAML.
 */
export default defineCommand<ListOptions>({
  configure(command) {
    command
      .addOption(toolFileOption())
      .addOption(toolFilterOption())
      .addOption(
        new Option('--format <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'),
      )
      .addOption(envOption('set an environment value for MCP servers (repeatable)'))
      .addOption(mcpToolsOption());
  },
  async run({ options }, io) {
    const file = resolveToolFilePath(options.file, io.cwd);
    const collection = await loadCollectionOrSay(file, { extra: options.env, mcp: options.mcp }, io);
    if (!collection) return 1;
    const tools = collection
      .list()
      .filter((tool) => (options.filter ?? []).every((filter) => matchesToolFilter(tool, filter)));
    if (options.format === 'json') io.stdout.write(`${JSON.stringify(tools.map(describeTool), null, 2)}\n`);
    else if (options.format === 'yaml') io.stdout.write(stringify(tools.map(describeTool)));
    else if (tools.length === 0) io.stdout.write('no tools match\n');
    else io.stdout.write(`${table(tools)}\n`);
    return 0;
  },
});
