import { checkInputSchema, pointerToPath } from './input-schema-check.ts';
import type { McpServerConfig } from './mcp-server-schema.ts';
import { formatJsonPath } from '@mci/protocol';
import type { SchemaIssue } from './schema-error.ts';
import type { Candidate } from './tool-candidate.ts';

/**
 * Checks of the enabled tools: a valid `inputSchema`, and `mcp` executions naming a server of
 * `mcpServers` (not checked without it: a toolset on its own cannot declare servers).
 */
export function checkTools(
  candidates: readonly Candidate[],
  mcpServers?: Record<string, McpServerConfig>,
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
    if (mcpServers && tool.execution.type === 'mcp' && !(tool.execution.serverName in mcpServers)) {
      const known = Object.keys(mcpServers);
      const message = `MCP server "${tool.execution.serverName}" is not declared in the main file's mcp_servers${known.length ? ` (declared: ${known.join(', ')})` : ''}`;
      issues.push(at(['execution', 'serverName'], message));
    }
  }
  return issues;
}

/** Two enabled tools with one name: an issue on the second, naming both places. */
export function findDuplicates(candidates: readonly Candidate[]): SchemaIssue[] {
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
