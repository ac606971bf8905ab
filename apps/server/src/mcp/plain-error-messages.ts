import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCErrorResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Makes `transport` send JSON-RPC errors with their plain message: an `McpError` thrown by a handler
 * (ours or the SDK's task handlers) carries `MCP error CODE: message`, the SDK sends that text as
 * the error's `message`, and the SDK client prefixes it once more ("MCP error -32602: MCP error
 * -32602: ..."). Call before connecting the server to `transport`.
 * @see https://www.jsonrpc.org/specification#error_object
 */
export function sendPlainErrorMessages(transport: Transport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(withPlainMessage(message), options);
}

function withPlainMessage(message: JSONRPCMessage): JSONRPCMessage {
  if (!isJSONRPCErrorResponse(message)) return message;
  const prefix = `MCP error ${message.error.code}: `;
  if (!message.error.message.startsWith(prefix)) return message;
  return { ...message, error: { ...message.error, message: message.error.message.slice(prefix.length) } };
}
