import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, MAX_SEARCH_QUERY_LENGTH } from '@mci/sandbox';
import type { ResolvedTool } from '@mci/schema';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { RUN_CODE_OUTPUT_SCHEMA } from './call-results.ts';

/** The name of the code-mode tool. */
export const RUN_CODE = 'run_code';
/** The name of the tool search tool (`tools.search` over MCP). */
export const SEARCH_TOOLS = 'search_tools';
/** The name of the tool that describes one tool (`tools.describe` over MCP). */
export const DESCRIBE_TOOL = 'describe_tool';
/** MCP lists each saved skill of the caller as a tool named this prefix and the skill's name. */
export const SKILL_TOOL_PREFIX = 'skill_';
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
- await state.set(key, value) keeps a value for later run_code calls of this MCP session (durable); await state.get(key) reads it, state.keys(prefix) lists keys.
- The program is type-checked first: a tool that does not exist, a missing required input property or a syntax error stops it before anything runs, with the line to fix.
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

/** Whether the declarations go into `run_code`'s description, or only behind the resource. */
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
    : `\n\nThe TypeScript declarations of the globals and tools are ${bytes} bytes long: read the resource ${TOOLS_DTS_URI}, or find tools with ${SEARCH_TOOLS} {query} and read one's declaration with ${DESCRIBE_TOOL} {name} (in the program: tools.search(query), tools.describe(name)).`;
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
        check: {
          type: 'string',
          enum: ['block', 'warn', 'off'],
          description:
            "the type check before the run: block (certain errors stop it before anything runs), warn, off (default: the server's)",
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

/** The `search_tools` tool: the tools that best match a query, as `tools.search` finds them. */
export const searchToolsTool: Tool = {
  name: SEARCH_TOOLS,
  title: 'Search the tools',
  description: `Finds the tools (callable as tools.<name>(props) in ${RUN_CODE}) that best match a query: ranked full-text search over their names, descriptions, tags and input property names, best match first. ${DESCRIBE_TOOL} gives one tool's declaration.`,
  inputSchema: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_SEARCH_QUERY_LENGTH,
        description: 'words about what the tool does',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_SEARCH_LIMIT,
        default: DEFAULT_SEARCH_LIMIT,
        description: 'most tools returned',
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            description: { type: 'string' },
            score: { type: 'number', description: 'higher is a better match' },
          },
          required: ['name', 'score'],
        },
      },
    },
    required: ['tools'],
  },
  annotations: { title: 'Search the tools', readOnlyHint: true, openWorldHint: false },
  execution: { taskSupport: 'forbidden' },
};

/** The `describe_tool` tool: one tool's description, schema, annotations and declaration. */
export const describeToolTool: Tool = {
  name: DESCRIBE_TOOL,
  title: 'Describe a tool',
  description: `Tells the description, input schema, annotations and TypeScript declaration (as used by ${RUN_CODE}) of one tool.`,
  inputSchema: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1, description: 'the name of the tool' } },
    required: ['name'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      inputSchema: { type: 'object' },
      annotations: { type: 'object' },
      declaration: { type: 'string', description: 'the TypeScript declaration of tools.<name>' },
    },
    required: ['name', 'inputSchema', 'declaration'],
  },
  annotations: { title: 'Describe a tool', readOnlyHint: true, openWorldHint: false },
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

/**
 * The MCP tool of a saved skill (`skill_<name>`): its description and input schema. Calling it runs
 * `skills.<name>(arguments)` in a process of the caller and answers like `run_code`.
 */
export function skillToolDefinition(skill: {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}): Tool {
  return {
    name: `${SKILL_TOOL_PREFIX}${skill.name}`,
    title: `Skill ${skill.name}`,
    description: `${skill.description}\n\n(A saved skill: runs skills.${skill.name}(input) in the sandbox.)`,
    inputSchema: { ...skill.inputSchema, type: 'object' },
    outputSchema: RUN_CODE_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
  };
}
