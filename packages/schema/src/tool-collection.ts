import type { McpServerConfig } from './mcp-server-schema.ts';
import type { ToolFile } from './tool-file-schema.ts';
import { matchesToolFilter, type ToolFilter } from './tool-filter.ts';
import type { Tool } from './tool-schema.ts';

/** A tool together with where it was defined. */
export interface ResolvedTool extends Tool {
  /** Toolset (or MCP server) the tool came from; absent for tools of the main file. */
  toolset?: string;
  /** Absolute path of the file it came from (the main file for MCP server tools). */
  source: string;
}

/** The tools of a main tool file and its toolsets, ready to query. */
export interface ToolCollection {
  /** Absolute path of the main tool file. */
  file: string;
  /**
   * `main` for a main tool file; `toolset` for a toolset file loaded on its own (see
   * `loadToolFile`), whose `mcp` tools name servers that only a main file declares.
   */
  kind: 'main' | 'toolset';
  /** `toolset` only: the MCP servers its enabled tools name (declared by the main file using it). */
  mcpServerNames?: readonly string[];
  /** `toolset` only: when a cached MCP toolset goes stale (`expiresAt`, ISO 8601). */
  expiresAt?: string;
  /** Its directory: the root of relative paths and of path security. */
  dir: string;
  metadata?: ToolFile['metadata'];
  /** Absolute `libraryDir`. */
  libraryDir: string;
  /** Schema-level value, as written. */
  enableAnyPaths: boolean;
  /** Schema-level value, as written (entries may be relative to `dir`). */
  directoryAllowList: string[];
  mcpServers: Record<string, McpServerConfig>;
  /** Names of the toolsets the main file references, in listed order. */
  toolsets: readonly string[];
  /** Enabled tools only: main-file tools first, then each toolset's in listed order. */
  tools: readonly ResolvedTool[];
  /** The enabled tools that pass `filter` (all of them without one), in collection order. */
  list(filter?: ToolFilter): ResolvedTool[];
  /** The enabled tool called `name`; `undefined` for unknown or disabled tools. */
  get(name: string): ResolvedTool | undefined;
}

/** What {@link createToolCollection} builds a collection from (`kind` defaults to `main`). */
export type ToolCollectionInit = Omit<ToolCollection, 'list' | 'get' | 'tools' | 'kind'> & {
  kind?: ToolCollection['kind'];
  tools: readonly ResolvedTool[];
};

/**
 * Builds a queryable collection. Disabled tools are dropped; names must already be unique
 * ({@link loadToolFile} checks that).
 */
export function createToolCollection(init: ToolCollectionInit): ToolCollection {
  const tools = Object.freeze(init.tools.filter((tool) => !tool.disabled));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return {
    ...init,
    kind: init.kind ?? 'main',
    tools,
    list: (filter) => (filter ? tools.filter((tool) => matchesToolFilter(tool, filter)) : [...tools]),
    get: (name) => byName.get(name),
  };
}
