import { z } from 'zod';
import { ApprovalSchema } from './approvals.ts';
import { CHAT_REPLY_SCHEMAS, CHAT_REQUEST_SCHEMAS, ChatEventSchema } from './chat.ts';
import { ServerEventSchema } from './events.ts';
import { SESSION_REPLY_SCHEMAS, SESSION_REQUEST_SCHEMAS, SessionRefSchema } from './sessions.ts';
import { PageRequestSchema, pageSchema } from './paging.ts';
import { RequestIdSchema, replySchema as reply, requestSchema } from './request-id.ts';
import { TraceContextFieldsSchema } from './trace-context.ts';
import {
  CheckModeSchema,
  ProcessMetadataSchema,
  ProcessSnapshotSchema,
  ProcessStateSchema,
  RunStatusSchema,
} from './snapshot.ts';

// Client -> server requests over the WebSocket (`/ws`), their replies, and the server's other messages.
// @see docs/protocol.md for every message with an example exchange.

export { type RequestId, RequestIdSchema } from './request-id.ts';

/** A process label: trimmed, 1 to 256 characters (a chat message id, say). */
export const RefSchema = z
  .string()
  .trim()
  .min(1, 'ref must not be empty')
  .max(256, 'ref is at most 256 characters');

/** The program of a process: a string with something in it besides whitespace. */
export const CodeSchema = z
  .string({ error: 'code is required and must be a string' })
  .refine((code) => code.trim() !== '', 'code must not be empty');

/** A process id: a positive integer. */
export const PidSchema = z.number().int().positive();

/** A stream id chosen by the client: 1 to 128 characters. */
export const StreamIdSchema = z.string().min(1, 'streamId must not be empty').max(128);

/** An event sequence number to resume after (`0` replays everything still stored). */
export const SinceSchema = z.number().int().nonnegative();

const id = RequestIdSchema.optional();

/**
 * Keys of a process's `metadata` that the server sets and reads (a stream's processes, the block
 * index of the response pipe, the MCP call a process answers): a client cannot set them.
 */
export const SERVER_METADATA_KEYS = ['streamId', 'intentIndex', 'mcp'] as const;

/** `metadata` as a client may give it: anything but {@link SERVER_METADATA_KEYS}. */
export const ClientMetadataSchema = ProcessMetadataSchema.superRefine((metadata, context) => {
  for (const key of SERVER_METADATA_KEYS) {
    if (Object.hasOwn(metadata, key))
      context.addIssue({
        code: 'custom',
        path: [key],
        message: `metadata.${key} is set by the server; a client cannot set it`,
      });
  }
});

/**
 * Create a process (queued at once unless `autorun: false`). `timeoutMs`: a positive integer, or `null`
 * for the server maximum; @default 30000. `memoryLimitMb` @default 128. Both are clamped to the server's
 * maxima. `lang` @default `'ts'`. Code over the server limit (default 100 KB) is a `CODE_TOO_LARGE` error.
 * The connection is subscribed to the new process. Reply: `{ process }`.
 */
export const ProcessCreateRequestSchema = requestSchema('process.create', {
  code: CodeSchema,
  lang: z.string().min(1).max(32).optional(),
  ref: RefSchema.optional(),
  timeoutMs: z.number().int().positive().nullable().optional(),
  memoryLimitMb: z.number().int().positive().optional(),
  autorun: z.boolean().optional(),
  /** The check before each run (see `CheckModeSchema`). @default the server's `check` */
  check: CheckModeSchema.optional(),
  /** Free-form data kept with the process; {@link SERVER_METADATA_KEYS} are refused. */
  metadata: ClientMetadataSchema.optional(),
  /** The session of the process: its id, or `true` for a new one (see `SessionRefSchema`). */
  session: SessionRefSchema.optional(),
  /** The caller's W3C Trace Context: the process's runs continue its trace. */
  ...TraceContextFieldsSchema.shape,
});

/**
 * Send a signal: `kill` (queued -> canceled at once; running -> terminating -> canceled) or `run` (an
 * idle process starts a new run). `force` is accepted for MCI process API compatibility and has no
 * effect. A signal the state does not allow is a `CONFLICT` error. Reply: `{ process }`.
 */
export const ProcessSignalRequestSchema = requestSchema('process.signal', {
  pid: PidSchema,
  signal: z.enum(['kill', 'run']),
  force: z.boolean().optional(),
});

/** Read one process's snapshot. Reply: `{ process }`. */
export const ProcessGetRequestSchema = requestSchema('process.get', { pid: PidSchema });

/**
 * A page of the visible processes, newest first, optionally filtered: `limit` (1-100, default 50)
 * after `cursor`, the `nextCursor` of the page before. Reply: `{ items, nextCursor?, processes }`
 * (`processes` holds the same items).
 */
export const ProcessListRequestSchema = requestSchema('process.list', {
  state: ProcessStateSchema.optional(),
  status: RunStatusSchema.optional(),
  ref: RefSchema.optional(),
  ...PageRequestSchema.shape,
});

/**
 * What a subscription follows: one process, every process with a ref, one stream (its intents,
 * processes and result), or every visible process.
 */
export const SubscriptionTargetSchema = z.union([
  z.strictObject({ pid: PidSchema }),
  z.strictObject({ ref: RefSchema }),
  z.strictObject({ streamId: StreamIdSchema }),
  z.strictObject({ all: z.literal(true) }),
]);
/** @see SubscriptionTargetSchema */
export type SubscriptionTarget = z.infer<typeof SubscriptionTargetSchema>;

const targetShape = {
  pid: PidSchema.optional(),
  ref: RefSchema.optional(),
  streamId: StreamIdSchema.optional(),
  all: z.literal(true).optional(),
};

const exactlyOneTarget = (
  value: { pid?: number; ref?: string; streamId?: string; all?: true },
  ctx: z.core.$RefinementCtx,
) => {
  const given = [value.pid, value.ref, value.streamId, value.all].filter((part) => part !== undefined).length;
  if (given !== 1) {
    ctx.addIssue({
      code: 'custom',
      message: 'give exactly one of pid, ref, streamId or all',
      path: ['pid'],
      input: value,
    });
  }
};

/**
 * Follow events of a process (`pid`), of a ref (`ref`), of a stream (`streamId`), or of everything
 * visible (`all: true`).
 * With `since`, stored events with `seq > since` are replayed first, in order, then live ones follow,
 * so a reconnecting client gets exactly what it missed. Reply: `{ subscription, replayed, seq }`.
 */
export const SubscribeRequestSchema = requestSchema('subscribe', {
  ...targetShape,
  since: SinceSchema.optional(),
}).superRefine(exactlyOneTarget);

/** Stop following a target given to `subscribe` (the same pid, ref, streamId or all). Reply: `{ subscription }`. */
export const UnsubscribeRequestSchema = requestSchema('unsubscribe', targetShape).superRefine(
  exactlyOneTarget,
);

/**
 * Open a stream (one model turn). Its exec intents become processes with this `ref`; the connection is
 * subscribed to the stream's intents, processes and result. Reply: `{ streamId }`.
 */
export const StreamStartRequestSchema = requestSchema('stream.start', {
  streamId: StreamIdSchema,
  ref: RefSchema.optional(),
  /** The check mode of the stream's processes (see `CheckModeSchema`). @default the server's `check` */
  check: CheckModeSchema.optional(),
  /** The session of the stream's processes: its id, or `true` for a new one (see `SessionRefSchema`). */
  session: SessionRefSchema.optional(),
  /** The caller's W3C Trace Context: the stream's processes continue its trace. */
  ...TraceContextFieldsSchema.shape,
});

/** Push the next piece of model output (any split, even inside a fence or a character). Reply: `{ streamId }`. */
export const StreamChunkRequestSchema = requestSchema('stream.chunk', {
  streamId: StreamIdSchema,
  text: z.string(),
});

/** End a stream; `stream.result` follows once all its processes are idle. Reply: `{ streamId }`. */
export const StreamEndRequestSchema = requestSchema('stream.end', { streamId: StreamIdSchema });

/**
 * Approve or deny pending approval `approvalId` (docs/approvals.md): its process resumes. Only an
 * operator or the owner of the process may; once decided, `NOT_PENDING`. Reply: `{ approval }`.
 */
export const ApprovalDecideRequestSchema = requestSchema('approval.decide', {
  approvalId: z.string().min(1).max(64),
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(2000).optional(),
});

/** Every client -> server message, discriminated by `type`. */
export const ClientMessageSchema = z.discriminatedUnion('type', [
  ProcessCreateRequestSchema,
  ProcessSignalRequestSchema,
  ProcessGetRequestSchema,
  ProcessListRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  StreamStartRequestSchema,
  StreamChunkRequestSchema,
  StreamEndRequestSchema,
  ApprovalDecideRequestSchema,
  ...CHAT_REQUEST_SCHEMAS,
  ...SESSION_REQUEST_SCHEMAS,
]);
/** @see ClientMessageSchema */
export type ClientMessage = z.infer<typeof ClientMessageSchema>;
/** The `type` of a {@link ClientMessage}. */
export type ClientMessageType = ClientMessage['type'];
/** The request types, in protocol order. */
export const CLIENT_MESSAGE_TYPES = ClientMessageSchema.options.map((option) => option.shape.type.value);

export type ProcessCreateRequest = z.infer<typeof ProcessCreateRequestSchema>;
export type ProcessSignalRequest = z.infer<typeof ProcessSignalRequestSchema>;
export type ProcessGetRequest = z.infer<typeof ProcessGetRequestSchema>;
export type ProcessListRequest = z.infer<typeof ProcessListRequestSchema>;
export type SubscribeRequest = z.infer<typeof SubscribeRequestSchema>;
export type UnsubscribeRequest = z.infer<typeof UnsubscribeRequestSchema>;
export type StreamStartRequest = z.infer<typeof StreamStartRequestSchema>;
export type StreamChunkRequest = z.infer<typeof StreamChunkRequestSchema>;
export type StreamEndRequest = z.infer<typeof StreamEndRequestSchema>;
export type ApprovalDecideRequest = z.infer<typeof ApprovalDecideRequestSchema>;

// ---- server -> client: replies, errors, notices ----

/** The successful answer to a request: `request` names it, `id` echoes its id, `result` holds the answer. */
export const ReplyMessageSchema = z.discriminatedUnion('request', [
  reply('process.create', { process: ProcessSnapshotSchema }),
  reply('process.signal', { process: ProcessSnapshotSchema }),
  reply('process.get', { process: ProcessSnapshotSchema }),
  reply('process.list', {
    ...pageSchema(ProcessSnapshotSchema).shape,
    /** The same items as `items`, under the key of the MCI process API. */
    processes: z.array(ProcessSnapshotSchema),
  }),
  reply('subscribe', {
    subscription: SubscriptionTargetSchema,
    /** How many stored events were replayed before this reply. */
    replayed: z.number().int().nonnegative(),
    /** The latest seq the server had issued when it began to follow the target (live events after it follow). */
    seq: z.number().int().nonnegative(),
  }),
  reply('unsubscribe', { subscription: SubscriptionTargetSchema }),
  reply('stream.start', {
    streamId: StreamIdSchema,
    /** The stream's session, when it has one. */
    session: z.string().optional(),
  }),
  reply('stream.chunk', { streamId: StreamIdSchema }),
  reply('stream.end', { streamId: StreamIdSchema }),
  reply('approval.decide', { approval: ApprovalSchema }),
  ...CHAT_REPLY_SCHEMAS,
  ...SESSION_REPLY_SCHEMAS,
]);
/** @see ReplyMessageSchema */
export type ReplyMessage = z.infer<typeof ReplyMessageSchema>;
/** The reply to a request of type `T`. */
export type ReplyTo<T extends ClientMessageType> = Extract<ReplyMessage, { request: T }>;

/**
 * Error codes on the wire (HTTP status in parentheses): `VALIDATION` (400), `BAD_JSON` (400, frame is
 * not JSON), `UNKNOWN_TYPE` (400), `UNAUTHORIZED` (401), `FORBIDDEN` (403, also a page origin that is
 * not allowed), `NOT_FOUND` (404), `CONFLICT` (409), `NOT_PENDING` (409, an approval decided already), `CODE_TOO_LARGE` / `PAYLOAD_TOO_LARGE` (413),
 * `UNSUPPORTED_MEDIA_TYPE` (415, a body that is not `application/json`), `MISDIRECTED_REQUEST` (421, a
 * `Host` the server does not answer to), `QUEUE_FULL` / `QUOTA_EXCEEDED` (429, with `retryAfter`),
 * `INTERNAL` (500), `SHUTTING_DOWN` (503).
 */
export const ErrorCodeSchema = z.string().min(1);

/**
 * The one error body of the server, on HTTP (the JSON body of every non-2xx answer) and on the
 * WebSocket (inside an `error` message): `error` is the human-readable text (the field simple MCI
 * clients show), `code` the machine-readable code (see {@link ErrorCodeSchema}), `message` the same
 * text as `error`, and `path` names the bad field of a request (`pid`, `timeoutMs`, `tools[2].name`).
 */
export const ErrorBodySchema = z.object({
  error: z.string(),
  code: ErrorCodeSchema,
  message: z.string().optional(),
  path: z.string().optional(),
  /** Seconds to wait before trying again (a 429 `QUOTA_EXCEEDED`; HTTP also sends `Retry-After`). */
  retryAfter: z.number().int().nonnegative().optional(),
});
/** @see ErrorBodySchema */
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * The {@link ErrorBody} of `message` with `code` and, when given, the bad field's `path` and the
 * seconds to wait before a retry (`retryAfter`).
 */
export function errorBody(
  code: string,
  message: string,
  path?: string,
  retryAfter?: number,
): ErrorBody & { message: string } {
  return {
    error: message,
    code,
    message,
    ...(path !== undefined && { path }),
    ...(retryAfter !== undefined && { retryAfter }),
  };
}

/**
 * A request failed (or a frame could not be read): the {@link ErrorBody} beside `type: 'error'`; `id`
 * echoes the request's id when it had one. The connection stays open.
 */
export const ErrorMessageSchema = ErrorBodySchema.extend({
  type: z.literal('error'),
  id,
  message: z.string(),
});
/** @see ErrorMessageSchema */
export type ErrorMessage = z.infer<typeof ErrorMessageSchema>;

/**
 * Sent once when a connection opens: who the server takes the caller for, the latest `seq`, and the
 * limits that apply to this connection (`maxFrameBytes`, `maxCodeBytes`, in bytes).
 */
export const HelloMessageSchema = z.object({
  type: z.literal('hello'),
  principal: z.object({ id: z.string(), role: z.enum(['client', 'operator']) }),
  seq: z.number().int().nonnegative(),
  limits: z.object({ maxFrameBytes: z.number().int().positive(), maxCodeBytes: z.number().int().positive() }),
});
/** @see HelloMessageSchema */
export type HelloMessage = z.infer<typeof HelloMessageSchema>;

/**
 * The connection read too slowly: the server dropped its subscriptions (listed here) instead of
 * buffering without bound. `since` is the seq of the last event it delivered on this connection;
 * subscribe again with `since` to get the rest, in order, without repeats.
 */
export const OverflowMessageSchema = z.object({
  type: z.literal('overflow'),
  since: z.number().int().nonnegative(),
  subscriptions: z.array(SubscriptionTargetSchema),
});
/** @see OverflowMessageSchema */
export type OverflowMessage = z.infer<typeof OverflowMessageSchema>;

/** Every server -> client message: events (with `seq`), replies, errors and notices. */
export const ServerMessageSchema = z.union([
  ServerEventSchema,
  ReplyMessageSchema,
  ErrorMessageSchema,
  HelloMessageSchema,
  OverflowMessageSchema,
  ChatEventSchema,
]);
/** @see ServerMessageSchema */
export type ServerMessage = z.infer<typeof ServerMessageSchema>;
