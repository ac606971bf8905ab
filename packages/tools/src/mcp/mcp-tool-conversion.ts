import type { ToolInput } from '@mci/schema';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';

/** MCP annotation hints and the tags they give a tool when set to true. */
const HINT_TAGS = [
  ['readOnlyHint', 'readOnly'],
  ['destructiveHint', 'destructive'],
  ['idempotentHint', 'idempotent'],
  ['openWorldHint', 'openWorld'],
] as const;

/**
 * Turns a tool listed by an MCP server into an MCI tool: name, title, description, inputSchema and
 * annotations as given; `execution: {type: 'mcp', serverName, toolName}`; tags from the annotation
 * hints that are true (`readOnly`, `destructive`, `idempotent`, `openWorld`; filters also accept
 * mci-py's `IsReadOnly`, ... for them) and `audience_<role>` for each role of an `audience`
 * annotation (as mci-py tags them).
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-annotations
 */
export function mcpToolToMciTool(serverName: string, tool: McpTool): ToolInput {
  const annotations = tool.annotations ?? {};
  const tags: string[] = HINT_TAGS.filter(([hint]) => annotations[hint] === true).map(([, tag]) => tag);
  const audience = (annotations as { audience?: unknown }).audience;
  if (Array.isArray(audience)) {
    for (const role of audience) if (typeof role === 'string' && role) tags.push(`audience_${role}`);
  }
  const converted: ToolInput = {
    name: tool.name,
    tags,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    execution: { type: 'mcp', serverName, toolName: tool.name },
  };
  const title = tool.title ?? annotations.title;
  if (title !== undefined) converted.title = title;
  if (tool.description !== undefined) converted.description = tool.description;
  if (tool.annotations) converted.annotations = { ...tool.annotations };
  return converted;
}
