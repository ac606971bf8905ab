import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { checkInputSchema, pointerToPath } from './input-schema-check.ts';
import type { McpServerConfig } from './mcp-server-schema.ts';
import { parseToolFileDocument, parseToolsetFileDocument } from './parse-tool-file.ts';
import { formatJsonPath, SchemaError, type SchemaErrorCode, type SchemaIssue } from './schema-error.ts';
import type { SourceDocument } from './source-document.ts';
import { createToolCollection, type ResolvedTool, type ToolCollection } from './tool-collection.ts';
import { matchesToolFilter, schemaFilterToToolFilter } from './tool-filter.ts';
import { type Tool, ToolSchema } from './tool-schema.ts';
import type { ToolsetRef } from './toolset-schema.ts';
import { locateToolset } from './toolset-locator.ts';
import { toSchemaIssues } from './zod-issues.ts';

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

/** A tool with where it is written, for cross-file issues. */
interface Candidate {
  tool: ResolvedTool;
  file: string;
  path: (string | number)[];
  source: SourceDocument | undefined;
}

/**
 * Loads a main tool file (JSON or YAML), its toolsets from `libraryDir` and, with a resolver, its
 * MCP servers' tools; checks every tool's `inputSchema`, the servers named by `mcp` executions, and
 * that enabled tool names are unique.
 * @param path - Main tool file; relative paths resolve against the working directory.
 * @returns The collection: main-file tools, then each toolset's tools in listed order, then MCP tools.
 * @throws {SchemaError} with every issue found across the files (`FILE_NOT_FOUND`, `PARSE_ERROR`,
 * `INVALID_TOOL_FILE`, `TOOLSET_NOT_FOUND`, `DUPLICATE_TOOL`, `MCP_SERVER_FAILED`).
 * @see MCI schema reference, "Toolsets"
 */
export async function loadToolFile(path: string, options: LoadToolFileOptions = {}): Promise<ToolCollection> {
  const file = resolve(path);
  const { data, source } = parseToolFileDocument(await readToolFile(file, file), file);
  const dir = dirname(file);
  const libraryDir = resolve(dir, data.libraryDir);
  const mcpServers = data.mcp_servers ?? {};
  const issues: SchemaIssue[] = [];
  const issueAt = (code: SchemaErrorCode, path: (string | number)[], message: string): SchemaIssue => ({
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
    const resolver = options.mcpResolver;
    const ctx = { libraryDir, env: options.env ?? process.env };
    const servers = await Promise.all(
      Object.entries(mcpServers).map(async ([name, config]) => {
        try {
          return { name, config, tools: await resolver(name, config, ctx) };
        } catch (cause) {
          const message = `MCP server "${name}" failed: ${cause instanceof Error ? cause.message : String(cause)}`;
          issues.push(issueAt('MCP_SERVER_FAILED', ['mcp_servers', name], message));
          return { name, config, tools: [] };
        }
      }),
    );
    for (const { name, config, tools } of servers) {
      const filter = config.config?.filter;
      const keep = filter ? schemaFilterToToolFilter(filter, config.config?.filterValue ?? '') : {};
      tools.forEach((raw, index) => {
        const parsed = ToolSchema.safeParse(raw, { reportInput: true });
        if (!parsed.success) {
          for (const issue of toSchemaIssues(parsed.error.issues, file, {
            value: raw,
            locate: () => undefined,
          })) {
            const at = issue.path ? ` at tools[${index}].${issue.path}` : '';
            const message = `MCP server "${name}" returned an invalid tool${at}: ${issue.message}`;
            issues.push(issueAt('MCP_SERVER_FAILED', ['mcp_servers', name], message));
          }
          return;
        }
        const tool: ResolvedTool = { ...parsed.data, toolset: name, source: file };
        if (matchesToolFilter(tool, keep)) {
          candidates.push({ tool, file, path: ['mcp_servers', name], source });
        }
      });
    }
  }

  issues.push(...checkTools(candidates, mcpServers), ...findDuplicates(candidates));
  if (issues.length > 0) throw SchemaError.fromIssues(issues);

  return createToolCollection({
    file,
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

async function readToolFile(path: string, label: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'file not found'
        : code === 'EISDIR'
          ? 'is a directory, not a tool file'
          : `cannot read: ${(cause as Error).message}`;
    throw new SchemaError('FILE_NOT_FOUND', [{ file: label, path: '', message }], { cause });
  }
}

async function loadToolset(
  ref: ToolsetRef,
  index: number,
  libraryDir: string,
  issueAt: (code: SchemaErrorCode, path: (string | number)[], message: string) => SchemaIssue,
): Promise<{ issues: SchemaIssue[]; candidates: Candidate[] }> {
  const issues: SchemaIssue[] = [];
  const candidates: Candidate[] = [];
  const refPath = ['toolsets', index];
  const inside = relative(libraryDir, resolve(libraryDir, ref.name));
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    const message = `toolset name "${ref.name}" must name a file or directory inside libraryDir (${libraryDir})`;
    return { issues: [issueAt('INVALID_TOOL_FILE', [...refPath, 'name'], message)], candidates };
  }
  const location = await locateToolset(libraryDir, ref.name);
  if (!location.found) {
    return { issues: [issueAt('TOOLSET_NOT_FOUND', [...refPath, 'name'], location.reason)], candidates };
  }
  for (const toolsetFile of location.files) {
    try {
      const { data, source } = parseToolsetFileDocument(
        await readToolFile(toolsetFile, toolsetFile),
        toolsetFile,
      );
      data.tools.forEach((tool, toolIndex) => {
        candidates.push({
          tool: { ...tool, toolset: ref.name, source: toolsetFile },
          file: toolsetFile,
          path: ['tools', toolIndex],
          source,
        });
      });
    } catch (error) {
      if (!(error instanceof SchemaError)) throw error;
      issues.push(...error.issues);
    }
  }
  if (!ref.filter) return { issues, candidates };

  const filter = schemaFilterToToolFilter(ref.filter, ref.filterValue ?? '');
  const names = filter.only ?? filter.except;
  if (names && issues.length === 0) {
    // A misspelt name would silently drop (or keep) a tool: say so instead.
    const known = new Set(candidates.map((candidate) => candidate.tool.name));
    const unknown = names.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      const message = `${ref.filter} names ${unknown.map((name) => `"${name}"`).join(', ')}, not defined in toolset "${ref.name}" (it defines ${[...known].join(', ') || 'no tools'})`;
      issues.push(issueAt('INVALID_TOOL_FILE', [...refPath, 'filterValue'], message));
    }
  }
  return { issues, candidates: candidates.filter((candidate) => matchesToolFilter(candidate.tool, filter)) };
}

function checkTools(
  candidates: readonly Candidate[],
  mcpServers: Record<string, McpServerConfig>,
): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const { tool, file, path, source } of candidates) {
    if (tool.disabled) continue;
    const at = (sub: (string | number)[], message: string): SchemaIssue => ({
      file,
      path: formatJsonPath([...path, ...sub]),
      message,
      code: 'INVALID_TOOL_FILE',
      ...source?.locate([...path, ...sub]),
    });
    if (tool.inputSchema) {
      for (const problem of checkInputSchema(tool.inputSchema)) {
        issues.push(at(['inputSchema', ...pointerToPath(problem.pointer)], problem.message));
      }
    }
    if (tool.execution.type === 'mcp' && !(tool.execution.serverName in mcpServers)) {
      const known = Object.keys(mcpServers);
      const message = `MCP server "${tool.execution.serverName}" is not declared in the main file's mcp_servers${known.length ? ` (declared: ${known.join(', ')})` : ''}`;
      issues.push(at(['execution', 'serverName'], message));
    }
  }
  return issues;
}

function findDuplicates(candidates: readonly Candidate[]): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const first = new Map<string, Candidate>();
  const describe = (candidate: Candidate) => {
    const where = candidate.source?.locate(candidate.path);
    return `${candidate.file}${where ? `:${where.line}` : ''} (${formatJsonPath(candidate.path)})`;
  };
  for (const candidate of candidates) {
    if (candidate.tool.disabled) continue;
    const earlier = first.get(candidate.tool.name);
    if (!earlier) {
      first.set(candidate.tool.name, candidate);
      continue;
    }
    issues.push({
      file: candidate.file,
      path: formatJsonPath([...candidate.path, 'name']),
      message: `duplicate tool name "${candidate.tool.name}": defined in ${describe(earlier)} and in ${describe(candidate)}`,
      code: 'DUPLICATE_TOOL',
      ...candidate.source?.locate([...candidate.path, 'name']),
    });
  }
  return issues;
}
