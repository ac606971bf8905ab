/**
 * The MCI execution result: the MCP `CallToolResult` shape plus `error` and `metadata`.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result
 */

/** Text content. */
export interface TextContent {
  type: 'text';
  text: string;
}

/** Binary image content, base64-encoded `data`. */
export interface ImageContent {
  type: 'image';
  /** Base64-encoded bytes. */
  data: string;
  /** For example `image/png`. */
  mimeType: string;
}

/** Binary audio content, base64-encoded `data`. */
export interface AudioContent {
  type: 'audio';
  /** Base64-encoded bytes. */
  data: string;
  /** For example `audio/wav`. */
  mimeType: string;
}

/** A link to a resource the tool points at (not its contents). */
export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType?: string;
  description?: string;
}

/** A resource embedded in a result: its contents as text or as a base64 `blob`. */
export interface EmbeddedResourceContent {
  type: 'resource';
  resource:
    | { uri: string; mimeType?: string; text: string }
    | { uri: string; mimeType?: string /** Base64-encoded bytes. */; blob: string };
}

/** One item of a result's content: the MCP content union. */
export type Content =
  | TextContent
  | ImageContent
  | AudioContent
  | ResourceLinkContent
  | EmbeddedResourceContent;

/**
 * What executing a tool returns. On error `isError` is true, `error` holds the message and `content`
 * holds one text item with the same message.
 */
export interface ToolResult {
  isError: boolean;
  content: Content[];
  /** The error message, when `isError` is true. */
  error?: string;
  /** Executor-specific facts: `status_code`, `exit_code`, `mcp_server`, `canceled`, ... */
  metadata?: Record<string, unknown>;
  /** The parsed JSON body of an http tool, or an MCP tool's `structuredContent`. */
  structuredContent?: unknown;
}

/** Builds an error result whose `content` repeats the message. */
export function errorResult(message: string, metadata?: Record<string, unknown>): ToolResult {
  const result: ToolResult = { isError: true, content: [{ type: 'text', text: message }], error: message };
  if (metadata) result.metadata = metadata;
  return result;
}

/** Builds a successful result holding one text item. */
export function textResult(text: string, metadata?: Record<string, unknown>): ToolResult {
  const result: ToolResult = { isError: false, content: [{ type: 'text', text }] };
  if (metadata) result.metadata = metadata;
  return result;
}

/** The message of a canceled execution. */
export const CANCELED_MESSAGE = 'Execution canceled';

/** The result of an execution canceled through its `AbortSignal` (`metadata.canceled` is true). */
export function canceledResult(reason?: unknown): ToolResult {
  const detail = reason instanceof Error && reason.name !== 'AbortError' ? `: ${reason.message}` : '';
  return errorResult(`${CANCELED_MESSAGE}${detail}`, { canceled: true });
}
