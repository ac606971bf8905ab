import type { McpToolsetResolver } from './load-tool-file.ts';
import type { McpServerConfig } from './mcp-server-schema.ts';
import type { SchemaIssue } from './schema-error.ts';
import type { SourceDocument } from './source-document.ts';
import type { Candidate, IssueAt } from './tool-candidate.ts';
import type { ResolvedTool } from './tool-collection.ts';
import { matchesToolFilter, schemaFilterToToolFilter } from './tool-filter.ts';
import { ToolSchema } from './tool-schema.ts';
import { toSchemaIssues } from './zod-issues.ts';

/**
 * Asks `resolver` for the tools of every MCP server (in parallel), validates them like file tools and
 * applies each server's `config.filter`. Failures become `MCP_SERVER_FAILED` issues on the server.
 */
export async function resolveMcpTools(
  mcpServers: Record<string, McpServerConfig>,
  resolver: McpToolsetResolver,
  ctx: { libraryDir: string; env: Record<string, string | undefined>; file: string; source: SourceDocument },
  issueAt: IssueAt,
): Promise<{ issues: SchemaIssue[]; candidates: Candidate[] }> {
  const issues: SchemaIssue[] = [];
  const candidates: Candidate[] = [];
  const { file, source } = ctx;
  const servers = await Promise.all(
    Object.entries(mcpServers).map(async ([name, config]) => {
      try {
        return {
          name,
          config,
          tools: await resolver(name, config, { libraryDir: ctx.libraryDir, env: ctx.env }),
        };
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
        // The tools come from a server, not a file: there are no lines to point at.
        const noLines = { value: raw, locate: () => undefined };
        for (const issue of toSchemaIssues(parsed.error.issues, file, noLines)) {
          const at = issue.path ? ` at tools[${index}].${issue.path}` : '';
          const message = `MCP server "${name}" returned an invalid tool${at}: ${issue.message}`;
          issues.push(issueAt('MCP_SERVER_FAILED', ['mcp_servers', name], message));
        }
        return;
      }
      const tool: ResolvedTool = { ...parsed.data, toolset: name, source: file };
      if (matchesToolFilter(tool, keep)) candidates.push({ tool, file, path: ['mcp_servers', name], source });
    });
  }
  return { issues, candidates };
}
