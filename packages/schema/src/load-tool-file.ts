import { dirname, resolve } from 'node:path';
import { checkTools, findDuplicates } from './collection-checks.ts';
import { loadToolset } from './load-toolset.ts';
import type { McpServerConfig } from './mcp-server-schema.ts';
import { resolveMcpTools } from './mcp-tools.ts';
import { isStandaloneToolset, parseToolFileDocument, parseToolsetFileDocument } from './parse-tool-file.ts';
import { readToolFile } from './read-tool-file.ts';
import { formatJsonPath } from '@mci/protocol';
import { SchemaError, type SchemaIssue } from './schema-error.ts';
import { parseSourceDocument, type SourceDocument } from './source-document.ts';
import type { Candidate, IssueAt } from './tool-candidate.ts';
import { createToolCollection, type ToolCollection } from './tool-collection.ts';
import { DEFAULT_LIBRARY_DIR, type ToolFile } from './tool-file-schema.ts';
import type { Tool } from './tool-schema.ts';

/**
 * Fetches the tools of one MCP server of `mcp_servers` (implemented by the tools package, which
 * speaks MCP and caches in `{libraryDir}/mcp/`). Returned tools are validated like file tools.
 */
export type McpToolsetResolver = (
  serverName: string,
  config: McpServerConfig,
  ctx: { libraryDir: string; env: Record<string, string | undefined> },
) => Promise<Tool[]>;

/** Options of {@link loadToolFile}. */
export interface LoadToolFileOptions {
  /** Environment given to the MCP resolver. @default process.env */
  env?: Record<string, string | undefined>;
  /** Without it, `mcp_servers` contribute no tools. */
  mcpResolver?: McpToolsetResolver;
}

/**
 * Loads a main tool file (JSON or YAML), its toolsets from `libraryDir` and, with a resolver, its
 * MCP servers' tools; checks every tool's `inputSchema`, the servers named by `mcp` executions, and
 * that enabled tool names are unique.
 * @param path - Main tool file; relative paths resolve against the working directory.
 * A toolset file given on its own (a cached MCP toolset with `expiresAt`, or a toolset whose `mcp`
 * tools name servers only a main file declares) is checked as a toolset: its schema, every
 * `inputSchema` and unique names; the servers its tools name are listed in `mcpServerNames` of the
 * collection (`kind: 'toolset'`), since no file but the main one can declare them.
 * @returns The collection: main-file tools, then each toolset's tools in listed order, then MCP tools.
 * @throws {SchemaError} with every issue found across the files (`FILE_NOT_FOUND`, `PARSE_ERROR`,
 * `INVALID_TOOL_FILE`, `TOOLSET_NOT_FOUND`, `DUPLICATE_TOOL`, `MCP_SERVER_FAILED`).
 * @see MCI schema reference, "Toolsets"
 */
export async function loadToolFile(path: string, options: LoadToolFileOptions = {}): Promise<ToolCollection> {
  const file = resolve(path);
  const document = parseSourceDocument(await readToolFile(file, file), file);
  const standalone = isStandaloneToolset(document.value) ? toolsetAsMainFile(document, file) : undefined;
  const { data, source } = standalone ?? parseToolFileDocument(document, file);
  const dir = dirname(file);
  const libraryDir = resolve(dir, data.libraryDir);
  const mcpServers = data.mcp_servers ?? {};
  const issues: SchemaIssue[] = [];
  const issueAt: IssueAt = (code, path, message) => ({
    file,
    path: formatJsonPath(path),
    message,
    code,
    ...source.locate(path),
  });

  const candidates: Candidate[] = (data.tools ?? []).map((tool, index) => ({
    tool: { ...tool, source: file },
    file,
    path: ['tools', index],
    source,
  }));

  const toolsets = await Promise.all(
    (data.toolsets ?? []).map((ref, index) => loadToolset(ref, index, libraryDir, issueAt)),
  );
  for (const result of toolsets) {
    issues.push(...result.issues);
    candidates.push(...result.candidates);
  }

  if (options.mcpResolver) {
    const ctx = { libraryDir, env: options.env ?? process.env, file, source };
    const mcp = await resolveMcpTools(mcpServers, options.mcpResolver, ctx, issueAt);
    issues.push(...mcp.issues);
    candidates.push(...mcp.candidates);
  }

  // A toolset on its own cannot declare the servers its tools name: the main file using it does.
  issues.push(...checkTools(candidates, standalone ? undefined : mcpServers), ...findDuplicates(candidates));
  if (issues.length > 0) throw SchemaError.fromIssues(issues);

  return createToolCollection({
    file,
    ...(standalone ? standalone.kind : { kind: 'main' as const }),
    dir,
    ...(data.metadata ? { metadata: data.metadata } : {}),
    libraryDir,
    enableAnyPaths: data.enableAnyPaths,
    directoryAllowList: data.directoryAllowList,
    mcpServers,
    toolsets: (data.toolsets ?? []).map((ref) => ref.name),
    tools: candidates.map((candidate) => candidate.tool),
  });
}

/**
 * A toolset file given as the main file, read as a main file with the defaults and no servers, plus
 * what the collection says about it (see {@link loadToolFile}).
 */
function toolsetAsMainFile(document: SourceDocument, file: string) {
  const { data, source } = parseToolsetFileDocument(document, file);
  const { expiresAt, ...toolset } = data;
  const mcpServerNames = [
    ...new Set(
      toolset.tools.flatMap((tool) =>
        tool.execution.type === 'mcp' && !tool.disabled ? [tool.execution.serverName] : [],
      ),
    ),
  ];
  const main: ToolFile = {
    ...toolset,
    libraryDir: DEFAULT_LIBRARY_DIR,
    enableAnyPaths: false,
    directoryAllowList: [],
  };
  return {
    data: main,
    source,
    kind: { kind: 'toolset' as const, mcpServerNames, ...(expiresAt ? { expiresAt } : {}) },
  };
}
