import type { ResolvedTool } from '@mci/schema';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { RUN_CODE_OUTPUT_SCHEMA } from './call-results.ts';

/** The name of the code-mode tool. */
export const RUN_CODE = 'run_code';
/** The name of the declaration search tool (listed when the declarations are too long to inline). */
export const SEARCH_TOOLS = 'search_tools';
/** The URI of the resource holding the full TypeScript declarations (`GET /tools.d.ts`). */
export const TOOLS_DTS_URI = 'mci://tools.d.ts';
/**
 * Largest declarations (UTF-8 bytes) inlined into `run_code`'s description; longer ones are left to
 * the {@link TOOLS_DTS_URI} resource and {@link SEARCH_TOOLS}. The example tool files need 2-4 KB.
 */
export const DEFAULT_MAX_INLINE_DTS_BYTES = 16 * 1024;

const GUIDE = `Runs a TypeScript program in a sandbox (isolated-vm) and returns what it produced. Write one program that does the whole job: call the tools, combine their results, and report with output().

- The program is the body of an async function: top-level await and return work; import and require do not.
- output(value) records a result (JSON-like values, Map, Set, bigint...); a non-undefined return value is recorded too.
- console.log/info go to stdout, console.warn/error to stderr.
- tools.<name>(props) calls a tool and resolves to { content, structuredContent? }; a failed call rejects with a ToolError (catch it to handle the failure).
- fetch(url, init) works for public hosts (the server's egress policy decides the rest).
- The run stops at timeoutMs (default set by the server). A throw fails the run with its line number.`;

/** What {@link runCodeTool} needs. */
export interface RunCodeToolOptions {
  /** The declarations of the sandbox globals and tools (`GET /tools.d.ts`). */
  toolsDts: string;
  /** @default DEFAULT_MAX_INLINE_DTS_BYTES */
  maxInlineBytes?: number;
  /** Whether sandboxed code can reach the open network (MCP `openWorldHint`). */
  openWorld: boolean;
}

/** Whether the declarations go into the description, or behind the resource and `search_tools`. */
export function inlinesDeclarations(
  toolsDts: string,
  maxInlineBytes = DEFAULT_MAX_INLINE_DTS_BYTES,
): boolean {
  return Buffer.byteLength(toolsDts) <= maxInlineBytes;
}

/**
 * The `run_code` tool: its description tells the model how to write the program and carries the
 * TypeScript declarations of every tool (or, when they are longer than `maxInlineBytes`, says how long
 * they are and where to read them). Task support is optional: long runs can be MCP tasks.
 */
export function runCodeTool(options: RunCodeToolOptions): Tool {
  const bytes = Buffer.byteLength(options.toolsDts);
  const declarations = inlinesDeclarations(options.toolsDts, options.maxInlineBytes)
    ? `\n\nThe globals and tools, as TypeScript declarations:\n\n\`\`\`ts\n${options.toolsDts}\`\`\``
    : `\n\nThe TypeScript declarations of the globals and tools are ${bytes} bytes long: read the resource ${TOOLS_DTS_URI}, or call ${SEARCH_TOOLS} {query} for the declarations of the tools that match.`;
  return {
    name: RUN_CODE,
    title: 'Run TypeScript with the tools',
    description: `${GUIDE}${declarations}`,
    inputSchema: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'the TypeScript program' },
        timeoutMs: {
          type: 'integer',
          minimum: 1,
          description: 'wall-clock limit in ms (clamped to the server maximum)',
        },
        ref: {
          type: 'string',
          minLength: 1,
          maxLength: 256,
          description: 'a label grouping this run with others (GET /processes?ref=, mci ps)',
        },
      },
      required: ['code'],
      additionalProperties: false,
    },
    outputSchema: RUN_CODE_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
    annotations: {
      title: 'Run TypeScript with the tools',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: options.openWorld,
    },
    execution: { taskSupport: 'optional' },
  };
}

/** The `search_tools` tool: declarations of the tools whose name or description matches. */
export const searchToolsTool: Tool = {
  name: SEARCH_TOOLS,
  title: 'Search the tool declarations',
  description: `Returns the TypeScript declarations (as used by ${RUN_CODE}) of the tools whose name or description contains every word of the query (case-insensitive).`,
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', description: 'words to look for' } },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  execution: { taskSupport: 'forbidden' },
};

/** A tool the MCP server exposes: its definition, and the secrets it uses (names, whether set). */
export type ExposedTool = ResolvedTool & { secrets?: ReadonlyArray<{ name: string; set: boolean }> };

/**
 * An MCI tool as an MCP tool: name, title, description and inputSchema as in the tool file, the MCI
 * annotations as MCP annotations, tags, toolset, execution type and the secrets it uses (names and
 * whether set, never values) under `_meta` (`mci/tags`, `mci/toolset`, `mci/execution`,
 * `mci/secrets`). Tools whose execution can be slow (cli, http, mcp) may run as tasks.
 */

export function mciToolDefinition(tool: ExposedTool): Tool {
  const type = tool.execution.type;
  const definition: Tool = {
    name: tool.name,
    inputSchema: (tool.inputSchema ?? { type: 'object' }) as Tool['inputSchema'],
    execution: {
      taskSupport: type === 'cli' || type === 'http' || type === 'mcp' ? 'optional' : 'forbidden',
    },
    _meta: {
      'mci/tags': [...tool.tags],
      'mci/execution': type,
      ...(tool.toolset !== undefined && { 'mci/toolset': tool.toolset }),
      ...(tool.secrets?.length && { 'mci/secrets': tool.secrets.map((secret) => ({ ...secret })) }),
    },
  };
  const title = tool.title ?? tool.annotations?.title;
  if (title !== undefined) definition.title = title;
  if (tool.description !== undefined) definition.description = tool.description;
  if (tool.annotations !== undefined) definition.annotations = { ...tool.annotations };
  return definition;
}
