import type { McpExecution } from '@mci/schema';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ExecutionContext } from '../execution-context.ts';
import { messageOf } from '../tool-error.ts';
import { type Content, canceledResult, errorResult, type ToolResult } from '../tool-result.ts';
import type { McpConnection } from './mcp-connection.ts';
import { endMcpCallSpan, startMcpCallSpan } from './mcp-span.ts';

/**
 * Calls the tool on its MCP server (the connection opens on first use). The MCP result's content,
 * `structuredContent` and `isError` pass through (every MCP content type, embedded resources with
 * their text or blob). Metadata: `mcp_server`, `mcp_tool`. The call is an OpenTelemetry client span
 * whose context goes to the server in `params._meta`.
 */
export async function executeMcp(
  execution: McpExecution,
  ctx: ExecutionContext,
  connection: McpConnection,
): Promise<ToolResult> {
  const metadata = { mcp_server: execution.serverName, mcp_tool: execution.toolName };
  let result: CallToolResult;
  const { span, meta } = startMcpCallSpan(execution.toolName, execution.serverName);
  try {
    const hints = ctx.tool.annotations;
    const repeatable = hints?.readOnlyHint === true || hints?.idempotentHint === true;
    result = await connection.callTool(execution.toolName, ctx.props, ctx.callerSignal, repeatable, meta);
    endMcpCallSpan(span, result.isError === true ? 'tool_error' : undefined);
  } catch (error) {
    endMcpCallSpan(span, ctx.signal?.aborted ? 'canceled' : error instanceof Error ? error.name : 'Error');
    if (ctx.signal?.aborted) return canceledResult(ctx.signal.reason);
    return errorResult(
      `MCP tool "${execution.toolName}" on server "${execution.serverName}" failed: ${messageOf(error)}`,
      metadata,
    );
  }
  const content = result.content.map(toContent);
  const mapped: ToolResult = { isError: result.isError === true, content, metadata };
  if (result.structuredContent !== undefined) mapped.structuredContent = result.structuredContent;
  if (mapped.isError) {
    mapped.error =
      content
        .filter((item) => item.type === 'text')
        .map((item) => item.text)
        .join('\n') || `MCP tool "${execution.toolName}" reported an error`;
  }
  return mapped;
}

function toContent(item: CallToolResult['content'][number]): Content {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text };
    case 'image':
    case 'audio':
      return { type: item.type, data: item.data, mimeType: item.mimeType };
    case 'resource_link': {
      const link: Content = { type: 'resource_link', uri: item.uri, name: item.name };
      if (item.mimeType !== undefined) link.mimeType = item.mimeType;
      if (item.description !== undefined) link.description = item.description;
      return link;
    }
    case 'resource': {
      const { resource } = item;
      const base = {
        uri: resource.uri,
        ...(resource.mimeType !== undefined && { mimeType: resource.mimeType }),
      };
      return {
        type: 'resource',
        resource:
          'text' in resource && typeof resource.text === 'string'
            ? { ...base, text: resource.text }
            : { ...base, blob: String((resource as { blob?: unknown }).blob ?? '') },
      };
    }
  }
}
