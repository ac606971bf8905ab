import { type FilterType, parseFilterValue } from './filter-value.ts';
import type { Tool } from './tool-schema.ts';

/**
 * Which tools to keep. Every field that is set must hold (they combine with AND):
 * `only` / `except` match tool names, `tags` keeps tools with at least one of the tags,
 * `withoutTags` drops tools with any of them (tags are case-sensitive), `toolsets` keeps tools that
 * came from one of the named toolsets or MCP servers (main-file tools have none).
 */
export interface ToolFilter {
  only?: readonly string[];
  except?: readonly string[];
  tags?: readonly string[];
  withoutTags?: readonly string[];
  toolsets?: readonly string[];
}

/** Whether `tool` passes `filter`. Disabled tools never do. */
export function matchesToolFilter(
  tool: Tool & { toolset?: string | undefined },
  filter: ToolFilter,
): boolean {
  if (tool.disabled) return false;
  if (filter.only && !filter.only.includes(tool.name)) return false;
  if (filter.except?.includes(tool.name)) return false;
  if (filter.tags && !tool.tags.some((tag) => filter.tags?.includes(tag))) return false;
  if (filter.withoutTags && tool.tags.some((tag) => filter.withoutTags?.includes(tag))) return false;
  if (filter.toolsets && (tool.toolset === undefined || !filter.toolsets.includes(tool.toolset)))
    return false;
  return true;
}

/**
 * The {@link ToolFilter} of a schema-level `filter` / `filterValue` pair (toolset or MCP server).
 * @see MCI schema reference, "Schema-Level Filters"
 */
export function schemaFilterToToolFilter(filter: FilterType, filterValue: string): ToolFilter {
  return { [filter]: parseFilterValue(filterValue) };
}

/**
 * Parses a command-line filter `kind:a,b` (kind: only, except, tags, withoutTags, toolsets; items
 * comma-separated, trimmed, empty items dropped).
 * @throws {Error} when the kind is unknown or no item remains.
 */
export function parseToolFilterArgument(argument: string): ToolFilter {
  const colon = argument.indexOf(':');
  const kind = colon < 0 ? argument : argument.slice(0, colon);
  const kinds = ['only', 'except', 'tags', 'withoutTags', 'toolsets'];
  if (!kinds.includes(kind)) {
    throw new Error(
      `unknown filter "${kind}" in "${argument}": use one of ${kinds.map((k) => `${k}:...`).join(', ')}`,
    );
  }
  const items = parseFilterValue(colon < 0 ? '' : argument.slice(colon + 1));
  if (items.length === 0) throw new Error(`filter "${kind}" needs a comma-separated list, e.g. ${kind}:a,b`);
  return { [kind]: items };
}
