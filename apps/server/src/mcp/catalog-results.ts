import { searchArguments, type ToolCatalog, unknownToolMessage } from '@mci/sandbox';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DESCRIBE_TOOL, SEARCH_TOOLS } from './tool-definitions.ts';

// Bad arguments and unknown names are tool errors (`isError`), which a model reads and corrects,
// rather than protocol errors (MCP 2025-11-25, "Error Handling").

/** The answer of `search_tools`: the matches as `{ tools }`, and one line per match as text. */
export function searchToolsResult(catalog: ToolCatalog, args: Record<string, unknown>): CallToolResult {
  let query: string;
  let limit: number;
  try {
    for (const key of Object.keys(args))
      if (key !== 'query' && key !== 'limit') throw new TypeError(`unknown argument "${key}"`);
    ({ query, limit } = searchArguments(args.query, args.limit === undefined ? {} : { limit: args.limit }));
  } catch (error) {
    return failure(`${SEARCH_TOOLS}: ${(error as Error).message}`);
  }
  const tools = catalog.search(query, limit);
  const lines = tools.map(
    ({ name, description, score }) =>
      `${name} (score ${score})${description ? `: ${firstLine(description)}` : ''}`,
  );
  const text =
    tools.length === 0
      ? `No tool matches ${JSON.stringify(query)}.`
      : `${lines.join('\n')}\n\n${DESCRIBE_TOOL} {name} gives a tool's declaration.`;
  return { content: [{ type: 'text', text }], structuredContent: { tools } };
}

/** The answer of `describe_tool`: the description as structured content, the declaration as text. */
export function describeToolResult(catalog: ToolCatalog, args: Record<string, unknown>): CallToolResult {
  const { name } = args;
  if (typeof name !== 'string' || name === '')
    return failure(`${DESCRIBE_TOOL}: name must be a non-empty string`);
  const description = catalog.describe(name);
  if (!description)
    return failure(
      `${DESCRIBE_TOOL}: ${unknownToolMessage(catalog, name)} ${SEARCH_TOOLS} {query} finds tools by what they do.`,
    );
  return {
    content: [{ type: 'text', text: description.declaration }],
    structuredContent: { ...description },
  };
}

function failure(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0]!.trim();
}
