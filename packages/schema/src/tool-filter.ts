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

/**
 * The tags that MCP tool annotations give a tool, as mci-py spells them, and as this project does:
 * a filter on either spelling selects the same tools.
 */
export const MCP_HINT_TAG_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  IsReadOnly: 'readOnly',
  IsDestructive: 'destructive',
  IsIdempotent: 'idempotent',
  IsOpenWorld: 'openWorld',
});

/** A tag with mci-py's hint tag names read as this project's (`IsReadOnly` -> `readOnly`). */
function canonicalTag(tag: string): string {
  return Object.hasOwn(MCP_HINT_TAG_ALIASES, tag) ? MCP_HINT_TAG_ALIASES[tag]! : tag;
}

function hasAnyTag(tool: Tool, tags: readonly string[]): boolean {
  return tool.tags.some((tag) => {
    const canonical = canonicalTag(tag);
    return tags.some((wanted) => canonicalTag(wanted) === canonical);
  });
}

/**
 * Whether `tool` passes `filter`. Disabled tools never do. Tags compare case-sensitively, with
 * mci-py's MCP hint tags equal to ours ({@link MCP_HINT_TAG_ALIASES}).
 */
export function matchesToolFilter(
  tool: Tool & { toolset?: string | undefined },
  filter: ToolFilter,
): boolean {
  if (tool.disabled) return false;
  if (filter.only && !filter.only.includes(tool.name)) return false;
  if (filter.except?.includes(tool.name)) return false;
  if (filter.tags && !hasAnyTag(tool, filter.tags)) return false;
  if (filter.withoutTags && hasAnyTag(tool, filter.withoutTags)) return false;
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
