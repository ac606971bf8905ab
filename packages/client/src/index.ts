// Public API of @mci/client: the TypeScript client of MCI Server, for chat clients and operators.

// Connecting, and the client
export { connect, MciClient } from './client.ts';
// Streams of model output (one model turn each)
export { ChatStream } from './chat-stream.ts';
// Server-hosted conversations
export { ChatApi } from './chat-api.ts';
// Errors
export { ClientError } from './client-error.ts';
// The response pipe, rendered on the client side exactly as the server renders `stream.result.text`
export { DEFAULT_RESPONSE_PIPE_BYTES, formatResults } from '@mci/protocol';
// URLs and transports
export { resolveServerUrls } from './server-url.ts';
export { defaultSocketFactory, globalSocketFactory, nodeSocketFactory } from './socket.ts';

// Client types
export type { ConnectOptions, CreateProcessOptions, ProcessFilter, WaitOptions } from './client.ts';
export type { ReconnectOptions } from './backoff.ts';
export type { ConnectionState } from './connection.ts';
export type { SubscribeOptions, Subscription } from './feed.ts';
export type { OpenStreamOptions, StreamResult } from './chat-stream.ts';
export type { ChatStartOptions } from './chat-api.ts';
export type { ClientErrorCode } from './client-error.ts';
export type { ServerUrls } from './server-url.ts';
export type { SocketFactory, WebSocketLike } from './socket.ts';
// Wire types, re-exported from @mci/protocol for convenience
export type {
  ChatEvent,
  ChatMessage,
  Conversation,
  FormatResultsOptions,
  ModelInfo,
  IntentEvent,
  LogEvent,
  OutputEvent,
  ProcessEvent,
  ProcessResult,
  ProcessSnapshot,
  ProcessState,
  ProcessStatus,
  RunSnapshot,
  ServerEvent,
  StreamResultEvent,
  SubscriptionTarget,
  ToolEvent,
} from '@mci/protocol';
