// Public API of @mci/protocol: the wire model shared by the server and its clients.

// Approvals and policy decisions (docs/approvals.md)
export {
  type Approval,
  type ApprovalPage,
  ApprovalPageSchema,
  ApprovalSchema,
  type ApprovalState,
  ApprovalStateSchema,
  type PolicyDecision,
  PolicyDecisionSchema,
} from './approvals.ts';
// The audit of a run's tool calls and fetches (docs/operations.md, "Audit")
export {
  type CallApproval,
  CallApprovalSchema,
  type CallDecision,
  CallDecisionSchema,
  type CallPage,
  CallPageSchema,
  type CallRecord,
  CallRecordSchema,
  type CallResult,
  CallResultSchema,
  type CallSummary,
  CallSummarySchema,
} from './calls.ts';
// Paging of every list (docs/protocol.md, "Lists that page")
export {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  type Page,
  PageQuerySchema,
  type PageRequest,
  PageRequestSchema,
  pageSchema,
} from './paging.ts';
// Chat types
export type {
  ChatCancelRequest,
  ChatDeleteRequest,
  ChatDoneEvent,
  ChatErrorEvent,
  ChatEvent,
  ChatGetRequest,
  ChatListRequest,
  ChatMessage,
  ChatRenameRequest,
  ChatRole,
  ChatStartRequest,
  ChatStepEvent,
  ChatStopReason,
  ChatTokenEvent,
  ChatUsage,
  Conversation,
  ModelInfo,
} from './chat.ts';
// Server-hosted conversations: chat.* requests, replies and turn events (zod schemas)
export {
  CHAT_REPLY_SCHEMAS,
  CHAT_REQUEST_SCHEMAS,
  ChatCancelRequestSchema,
  ChatDeleteRequestSchema,
  ChatDoneEventSchema,
  ChatErrorEventSchema,
  ChatEventSchema,
  ChatGetRequestSchema,
  ChatListRequestSchema,
  ChatMessageSchema,
  ChatRenameRequestSchema,
  ChatRoleSchema,
  ChatStartRequestSchema,
  ChatStepEventSchema,
  ChatStopReasonSchema,
  ChatTokenEventSchema,
  ChatUsageSchema,
  ConversationIdSchema,
  ConversationSchema,
  ConversationTitleSchema,
  ModelInfoSchema,
  ModelNameSchema,
} from './chat.ts';
// A type helper for the unions above (events without `seq`, requests without `id`)
export type { DistributiveOmit } from './distributive-omit.ts';
// Event types
export type {
  ApprovalEvent,
  IntentEvent,
  LogEvent,
  OutputEvent,
  ProcessEvent,
  ServerEvent,
  ServerEventType,
  StreamResultEvent,
  ToolEvent,
} from './events.ts';
// Server -> client events (zod schemas)
export {
  ApprovalEventSchema,
  IntentEventSchema,
  LogEventSchema,
  OutputEventSchema,
  ProcessEventSchema,
  SeqSchema,
  ServerEventSchema,
  StreamResultEventSchema,
  ToolEventSchema,
} from './events.ts';
// Message types
export type {
  ApprovalDecideRequest,
  ClientMessage,
  ClientMessageType,
  ErrorBody,
  ErrorMessage,
  HelloMessage,
  OverflowMessage,
  ProcessCreateRequest,
  ProcessGetRequest,
  ProcessListRequest,
  ProcessSignalRequest,
  ReplyMessage,
  ReplyTo,
  RequestId,
  ServerMessage,
  StreamChunkRequest,
  StreamEndRequest,
  StreamStartRequest,
  SubscribeRequest,
  SubscriptionTarget,
  UnsubscribeRequest,
} from './messages.ts';
// Client -> server requests, replies and notices over the WebSocket (zod schemas)
export {
  ApprovalDecideRequestSchema,
  CLIENT_MESSAGE_TYPES,
  ClientMessageSchema,
  CodeSchema,
  ErrorBodySchema,
  ErrorCodeSchema,
  ErrorMessageSchema,
  errorBody,
  HelloMessageSchema,
  OverflowMessageSchema,
  PidSchema,
  ProcessCreateRequestSchema,
  SERVER_METADATA_KEYS,
  ClientMetadataSchema,
  ProcessGetRequestSchema,
  ProcessListRequestSchema,
  ProcessSignalRequestSchema,
  RefSchema,
  ReplyMessageSchema,
  RequestIdSchema,
  ServerMessageSchema,
  SinceSchema,
  StreamChunkRequestSchema,
  StreamEndRequestSchema,
  StreamIdSchema,
  StreamStartRequestSchema,
  SubscribeRequestSchema,
  SubscriptionTargetSchema,
  UnsubscribeRequestSchema,
} from './messages.ts';
// Session and state types
export type { Session, SessionDetail, SessionRef, StateKeyInfo, StateValue } from './sessions.ts';
// Sessions and their durable state: schemas and session.* / state.* requests
export {
  SESSION_REPLY_SCHEMAS,
  SESSION_REQUEST_SCHEMAS,
  SessionDeleteRequestSchema,
  SessionDetailSchema,
  SessionGetRequestSchema,
  SessionIdSchema,
  SessionListRequestSchema,
  SessionRefSchema,
  SessionSchema,
  StateDeleteRequestSchema,
  StateGetRequestSchema,
  StateKeyInfoSchema,
  StateKeySchema,
  StateSetRequestSchema,
  StateValueSchema,
} from './sessions.ts';
// Saved skills (docs/sessions.md, "Skills")
export type { Skill, SkillSaveRequest } from './skills.ts';
export {
  SkillCheckFailedSchema,
  SkillPageSchema,
  SkillSaveRequestSchema,
  SkillSchema,
} from './skills.ts';
// Output value types
export type { JsonValue } from './output-value.ts';
// Output values: one JSON encoding for every interface (reversible for values JSON lacks)
export { decodeOutputValue, encodeOutputValue } from './output-value.ts';
// Pictures and files as output values (output.image, output.file)
export type { FileOutput, ImageOutput } from './media-outputs.ts';
export { imagesIn, isFileOutput, isImageOutput, runFileUri, withoutMediaData } from './media-outputs.ts';
export type { ClientMessageProblem, ParsedClientMessage } from './parse-client-message.ts';
// Reading a client frame at the edge (never throws)
export { describeIssues, parseClientMessage } from './parse-client-message.ts';
// Response pipe types
export type { FormatResultsOptions, RejectedBlock } from './response-pipe.ts';
// The response pipe: results rendered for a model to read
export {
  DEFAULT_RESPONSE_PIPE_BYTES,
  formatResults,
  MIN_RESPONSE_PIPE_BYTES,
  toJson,
} from './response-pipe.ts';
// Snapshot types
export type {
  CheckDiagnostic,
  CheckMode,
  IntentAttributes,
  ProcessMetadata,
  ProcessResult,
  ProcessSnapshot,
  ProcessState,
  ProcessStatus,
  RunError,
  RunSnapshot,
  RunStatus,
  RunSummary,
} from './snapshot.ts';
// Process and run snapshots (zod schemas)
export {
  CheckDiagnosticSchema,
  CheckModeSchema,
  IntentAttributesSchema,
  ProcessMetadataSchema,
  ProcessResultSchema,
  ProcessSnapshotSchema,
  ProcessStateSchema,
  ProcessStatusSchema,
  RunErrorSchema,
  RunSnapshotSchema,
  RunStatusSchema,
  RunSummarySchema,
} from './snapshot.ts';
export type { TraceContextFields } from './trace-context.ts';
// The caller's W3C Trace Context, as fields of process.create and stream.start
export {
  MAX_TRACEPARENT_LENGTH,
  MAX_TRACESTATE_LENGTH,
  TraceContextFieldsSchema,
} from './trace-context.ts';
export type { IssuePart, ValidationIssue, ZodIssue } from './validation-issues.ts';
// Validation issues: zod issues as `{code, message, path}`, one path notation (`tools[2].name`)
export {
  describeValidationIssues,
  formatJsonPath,
  formatZodIssues,
  issueParts,
} from './validation-issues.ts';
