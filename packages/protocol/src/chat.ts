import { z } from 'zod';
import { PageRequestSchema, pageSchema } from './paging.ts';
import { replySchema as reply, requestSchema } from './request-id.ts';

// Server-hosted conversations over the WebSocket (`/ws`): the server runs the model loop itself
// (`mci serve --model provider:model`), so browsers never hold API keys.
// @see docs/agent.md and docs/protocol.md

/** A conversation id chosen by the server: 1 to 128 characters. */
export const ConversationIdSchema = z.string().min(1, 'conversationId must not be empty').max(128);

/**
 * A model name, `provider:model`: `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
 * `ollama:qwen3`, `replay:FILE`.
 */
export const ModelNameSchema = z
  .string()
  .max(1024)
  .regex(/^[a-z][a-z0-9-]*:.+$/, 'a model is named provider:model (openai:gpt-4.1-mini)');

/** A model the server is configured with (`GET /models`, `chat.list`, `chat.get`); never a key. */
export const ModelInfoSchema = z.object({
  /** `provider:model`, as given to `chat.start`. */
  name: z.string(),
  provider: z.string(),
  model: z.string(),
  /** The model `chat.start` uses when it names none (the first configured). */
  default: z.boolean(),
});
/** @see ModelInfoSchema */
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

/** Tokens a model request used, as the provider reported them. */
export const ChatUsageSchema = z.object({
  /** Prompt tokens (the whole context sent). */
  inputTokens: z.number().int().nonnegative(),
  /** Tokens the model wrote. */
  outputTokens: z.number().int().nonnegative(),
});
/** @see ChatUsageSchema */
export type ChatUsage = z.infer<typeof ChatUsageSchema>;

/**
 * Who wrote a message: `user` (the person), `assistant` (the model's answer), `results` (the
 * response pipe of the assistant message before it, sent back to the model as a user message).
 */
export const ChatRoleSchema = z.enum(['user', 'assistant', 'results']);
/** @see ChatRoleSchema */
export type ChatRole = z.infer<typeof ChatRoleSchema>;

/** One stored message of a conversation. */
export const ChatMessageSchema = z.object({
  /** Server-wide message id, increasing in conversation order. */
  id: z.number().int().positive(),
  conversationId: ConversationIdSchema,
  role: ChatRoleSchema,
  text: z.string(),
  /** The model that wrote it (`assistant`). */
  model: z.string().optional(),
  /** Step of the turn, from 1 (`assistant`, `results`). */
  step: z.number().int().positive().optional(),
  /** The processes its exec blocks created (`assistant`) or whose results it carries (`results`). */
  pids: z.array(z.number().int().positive()),
  /** What the model request that wrote it used (`assistant`). */
  usage: ChatUsageSchema.optional(),
  /** ISO 8601 time it was stored. */
  createdAt: z.string(),
});
/** @see ChatMessageSchema */
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/** A conversation's summary (without its messages). */
export const ConversationSchema = z.object({
  conversationId: ConversationIdSchema,
  /** The first user message, shortened, until renamed. */
  title: z.string(),
  /** The model of its latest turn. */
  model: z.string(),
  /** The principal that started it; only it (and operators) can see it. */
  owner: z.string(),
  /** ISO 8601 times. */
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int().nonnegative(),
  /** A turn is running now. */
  running: z.boolean(),
  /** Blocks run as the model writes them (`true`), or each waits for a `run` signal (`false`). */
  autorun: z.boolean(),
});
/** @see ConversationSchema */
export type Conversation = z.infer<typeof ConversationSchema>;

/** A conversation title: trimmed, 1 to 200 characters. */
export const ConversationTitleSchema = z
  .string()
  .trim()
  .min(1, 'title must not be empty')
  .max(200, 'title is at most 200 characters');

// ---- client -> server ----

/**
 * Start a turn: store `message` as a user message and run the model loop on the conversation. Without
 * `conversationId` a new conversation starts; an unknown one is `NOT_FOUND`, one with a turn running is
 * `CONFLICT`. `model` @default the server's default model; one the server lacks is `VALIDATION`.
 * Reply (at once): `{ conversation, message }`; then this connection gets `chat.token`, `chat.step`,
 * the turn's stream events (`intent`, `process`, `output`, `log`, `tool`, `stream.result`) and
 * finally `chat.done` or `chat.error`.
 */
export const ChatStartRequestSchema = requestSchema('chat.start', {
  conversationId: ConversationIdSchema.optional(),
  model: ModelNameSchema.optional(),
  message: z.string().min(1, 'message must not be empty').max(1_000_000),
  /**
   * Sets the conversation's run mode, kept for its later turns. `false`: each block's process is
   * created idle and waits for a `run` signal (`process.signal`), and the loop sends the results back
   * once every block of the answer has run and ended (or the turn is canceled). @default the
   * conversation's setting; `true` for a new one
   */
  autorun: z.boolean().optional(),
});

/**
 * Cancel the running turn of a conversation: the model request is aborted and the turn's running
 * processes are killed; `chat.done` follows with reason `canceled`. Reply: `{ conversationId,
 * canceled }` (`false` when no turn was running).
 */
export const ChatCancelRequestSchema = requestSchema('chat.cancel', { conversationId: ConversationIdSchema });

/**
 * A page of the caller's conversations, newest (created last) first: `limit` (1-100, default 50)
 * after `cursor`, the `nextCursor` of the page before. Reply: `{ items, nextCursor?, conversations,
 * models }` (`conversations` holds the same items).
 */
export const ChatListRequestSchema = requestSchema('chat.list', PageRequestSchema.shape);

/**
 * Read one conversation and a page of its messages in order: the newest `limit` before `before`, at
 * most 4 MiB of text (the newest message always whole). Reply: `{ conversation, messages, nextCursor?,
 * models }`; with `nextCursor`, older messages exist.
 */
export const ChatGetRequestSchema = requestSchema('chat.get', {
  conversationId: ConversationIdSchema,
  /** Most messages in the page (the newest ones before `before`). @default 200 */
  limit: z.number().int().min(1).max(1000).optional(),
  /** A `nextCursor` of an earlier page: the messages older than it. @default the newest */
  before: z.number().int().positive().optional(),
});

/** Rename a conversation. Reply: `{ conversation }`. */
export const ChatRenameRequestSchema = requestSchema('chat.rename', {
  conversationId: ConversationIdSchema,
  title: ConversationTitleSchema,
});

/**
 * Delete a conversation and its messages (a running turn is canceled first; its processes stay in the
 * process list). Reply: `{ conversationId }`.
 */
export const ChatDeleteRequestSchema = requestSchema('chat.delete', { conversationId: ConversationIdSchema });

/** The chat requests, members of the protocol's `ClientMessageSchema`. */
export const CHAT_REQUEST_SCHEMAS = [
  ChatStartRequestSchema,
  ChatCancelRequestSchema,
  ChatListRequestSchema,
  ChatGetRequestSchema,
  ChatRenameRequestSchema,
  ChatDeleteRequestSchema,
] as const;

export type ChatStartRequest = z.infer<typeof ChatStartRequestSchema>;
export type ChatCancelRequest = z.infer<typeof ChatCancelRequestSchema>;
export type ChatListRequest = z.infer<typeof ChatListRequestSchema>;
export type ChatGetRequest = z.infer<typeof ChatGetRequestSchema>;
export type ChatRenameRequest = z.infer<typeof ChatRenameRequestSchema>;
export type ChatDeleteRequest = z.infer<typeof ChatDeleteRequestSchema>;

// ---- server -> client: replies ----

/** The replies to the chat requests, members of the protocol's `ReplyMessageSchema`. */
export const CHAT_REPLY_SCHEMAS = [
  reply('chat.start', { conversation: ConversationSchema, message: ChatMessageSchema }),
  reply('chat.cancel', { conversationId: ConversationIdSchema, canceled: z.boolean() }),
  reply('chat.list', {
    ...pageSchema(ConversationSchema).shape,
    /** The same items as `items`. */
    conversations: z.array(ConversationSchema),
    models: z.array(ModelInfoSchema),
  }),
  reply('chat.get', {
    conversation: ConversationSchema,
    messages: z.array(ChatMessageSchema),
    /** Present when older messages exist: ask again with `before: nextCursor`. */
    nextCursor: z.number().int().positive().optional(),
    models: z.array(ModelInfoSchema),
  }),
  reply('chat.rename', { conversation: ConversationSchema }),
  reply('chat.delete', { conversationId: ConversationIdSchema }),
] as const;

// ---- server -> client: turn events ----
// Sent to the connection that started the turn, without `seq` (they are not stored as events: the
// stored messages are the record; `chat.get` reads them after a reconnect).

/** The next piece of the model's answer in step `step` (pieces split anywhere). */
export const ChatTokenEventSchema = z.object({
  type: z.literal('chat.token'),
  conversationId: ConversationIdSchema,
  step: z.number().int().positive(),
  /** The MCI stream this step's answer is written into (its `intent` events carry it too). */
  streamId: z.string(),
  text: z.string(),
});
/** @see ChatTokenEventSchema */
export type ChatTokenEvent = z.infer<typeof ChatTokenEventSchema>;

/**
 * A step ended: the model's answer is complete and stored (`message`, with its pids and usage), and
 * every process it started is idle. `results` is the response pipe sent back to the model, absent when
 * the loop stops after this step.
 */
export const ChatStepEventSchema = z.object({
  type: z.literal('chat.step'),
  conversationId: ConversationIdSchema,
  step: z.number().int().positive(),
  streamId: z.string(),
  message: ChatMessageSchema,
  results: ChatMessageSchema.optional(),
});
/** @see ChatStepEventSchema */
export type ChatStepEvent = z.infer<typeof ChatStepEventSchema>;

/**
 * Why a turn stopped: `answered` (an answer without exec blocks), `max-steps`, `canceled`
 * (`chat.cancel`, a deleted conversation or a closed connection), `context-budget` (the next request
 * would exceed the model's context).
 */
export const ChatStopReasonSchema = z.enum(['answered', 'max-steps', 'canceled', 'context-budget']);
/** @see ChatStopReasonSchema */
export type ChatStopReason = z.infer<typeof ChatStopReasonSchema>;

/** The turn ended normally: why, after how many steps, and the usage summed over its requests. */
export const ChatDoneEventSchema = z.object({
  type: z.literal('chat.done'),
  conversationId: ConversationIdSchema,
  reason: ChatStopReasonSchema,
  steps: z.number().int().nonnegative(),
  usage: ChatUsageSchema,
});
/** @see ChatDoneEventSchema */
export type ChatDoneEvent = z.infer<typeof ChatDoneEventSchema>;

/**
 * The turn ended with an error: `code` `MODEL_ERROR` (the provider answered with an error; `status` is
 * its HTTP status), `MODEL_UNREACHABLE` (network), `SERVER_ERROR` (running the blocks failed).
 * `message` names the provider and model and never holds a key.
 */
export const ChatErrorEventSchema = z.object({
  type: z.literal('chat.error'),
  conversationId: ConversationIdSchema,
  code: z.string(),
  message: z.string(),
  provider: z.string().optional(),
  model: z.string().optional(),
  status: z.number().int().optional(),
});
/** @see ChatErrorEventSchema */
export type ChatErrorEvent = z.infer<typeof ChatErrorEventSchema>;

/** Every chat turn event, discriminated by `type`. */
export const ChatEventSchema = z.discriminatedUnion('type', [
  ChatTokenEventSchema,
  ChatStepEventSchema,
  ChatDoneEventSchema,
  ChatErrorEventSchema,
]);
/** @see ChatEventSchema */
export type ChatEvent = z.infer<typeof ChatEventSchema>;
