// Public API of @mci/client: the TypeScript client of MCI Server, for chat clients and operators.

// Wire types, re-exported from @mci/protocol for convenience
export type {
  Approval,
  ApprovalPage,
  ApprovalState,
  CallPage,
  CallRecord,
  CallSummary,
  ChatEvent,
  ChatMessage,
  Conversation,
  FormatResultsOptions,
  IntentEvent,
  LogEvent,
  ModelInfo,
  OutputEvent,
  Page,
  ProcessEvent,
  ProcessResult,
  ProcessSnapshot,
  ProcessState,
  ProcessStatus,
  RunSnapshot,
  RunSummary,
  ServerEvent,
  StreamResultEvent,
  SubscriptionTarget,
  ToolEvent,
} from '@mci/protocol';
// The response pipe, rendered on the client side exactly as the server renders `stream.result.text`
export { DEFAULT_RESPONSE_PIPE_BYTES, formatResults } from '@mci/protocol';
export type { ReconnectOptions } from './backoff.ts';
export type { ChatStartOptions } from './chat-api.ts';
// Server-hosted conversations
export { ChatApi } from './chat-api.ts';
export type { StateSetOptions } from './sessions-api.ts';
// Sessions and their durable state (`client.sessions`)
export { SessionsApi } from './sessions-api.ts';
export type { OpenStreamOptions, StreamResult } from './chat-stream.ts';
// Streams of model output (one model turn each)
export { ChatStream } from './chat-stream.ts';

// Client types
export type {
  ConnectOptions,
  CreateProcessOptions,
  ProcessFilter,
  ProcessListOptions,
  WaitOptions,
} from './client.ts';
// Connecting, and the client
export { connect, MciClient } from './client.ts';
export type { ClientErrorCode } from './client-error.ts';
// Errors
export { ClientError } from './client-error.ts';
export type { ConnectionState } from './connection.ts';
export type { SubscribeOptions, Subscription } from './feed.ts';
export type { ApprovalListOptions, CallListOptions } from './http-api.ts';
export type { ServerUrls } from './server-url.ts';
// URLs and transports
export { resolveServerUrls } from './server-url.ts';
export type { SocketFactory, WebSocketLike } from './socket.ts';
export { defaultSocketFactory, globalSocketFactory, nodeSocketFactory } from './socket.ts';
