import { z } from 'zod';
import { PageRequestSchema, pageSchema } from './paging.ts';
import { replySchema as reply, requestSchema } from './request-id.ts';
import { ProcessSnapshotSchema } from './snapshot.ts';

const TimestampSchema = z.iso.datetime();

// Sessions (a principal's group of processes) and their durable state (docs/sessions.md).

/**
 * A session id chosen by a client: 1 to 128 letters, digits, `_`, `-` and `.`, starting with a letter
 * or digit.
 */
export const SessionIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/,
    'session must be 1 to 128 letters, digits, "_", "-" or ".", starting with a letter or digit',
  );

/**
 * The `session` of a new process or stream: an id the client chooses (created when new; another
 * principal's is a `CONFLICT`), or `true` for a new one the server makes (the snapshot's `session`
 * names it).
 */
export const SessionRefSchema = z.union([SessionIdSchema, z.literal(true)]);
/** @see SessionRefSchema */
export type SessionRef = z.infer<typeof SessionRefSchema>;

/** A state key: 1 to 256 characters without control characters. */
export const StateKeySchema = z
  .string()
  .min(1, 'key must not be empty')
  .max(256, 'key is at most 256 characters')
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'key must not contain control characters');

/** A session as listed: its id, owner (principal id) and times. */
export const SessionSchema = z.object({
  id: z.string(),
  owner: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
/** @see SessionSchema */
export type Session = z.infer<typeof SessionSchema>;

/** One state key as a session's detail lists it: its encoded size in bytes, version and expiry. */
export const StateKeyInfoSchema = z.object({
  key: z.string(),
  bytes: z.number().int().nonnegative(),
  version: z.number().int().positive(),
  expiresAt: TimestampSchema.optional(),
});
/** @see StateKeyInfoSchema */
export type StateKeyInfo = z.infer<typeof StateKeyInfoSchema>;

/** A session with its processes (newest first, at most 100) and its state keys. */
export const SessionDetailSchema = SessionSchema.extend({
  processes: z.array(ProcessSnapshotSchema),
  state: z.array(StateKeyInfoSchema),
});
/** @see SessionDetailSchema */
export type SessionDetail = z.infer<typeof SessionDetailSchema>;

/**
 * A state entry as HTTP and WebSocket answer it: `value` in the output encoding (docs/protocol.md,
 * "Output values"), its `version` and expiry.
 */
export const StateValueSchema = z.object({
  key: z.string(),
  value: z.unknown(),
  version: z.number().int().positive(),
  expiresAt: TimestampSchema.optional(),
});
/** @see StateValueSchema */
export type StateValue = z.infer<typeof StateValueSchema>;

/** List the caller's sessions (an operator: everyone's), newest first. Reply: `{ items, nextCursor? }`. */
export const SessionListRequestSchema = requestSchema('session.list', PageRequestSchema.shape);

/** Read one session with its processes and state keys. Reply: `{ session }`. */
export const SessionGetRequestSchema = requestSchema('session.get', { session: SessionIdSchema });

/** Delete a session and its state (its processes stay). Reply: `{ session }` (the id). */
export const SessionDeleteRequestSchema = requestSchema('session.delete', { session: SessionIdSchema });

/** Read one state entry (`NOT_FOUND` when absent or expired). Reply: `{ entry }`. */
export const StateGetRequestSchema = requestSchema('state.get', {
  session: SessionIdSchema,
  key: StateKeySchema,
});

/**
 * Write one state entry: `value` in the output encoding; `ttlMs` makes it expire; `ifVersion` makes
 * it a compare-and-set (`VERSION_CONFLICT` when stale). Reply: `{ key, version }`.
 */
export const StateSetRequestSchema = requestSchema('state.set', {
  session: SessionIdSchema,
  key: StateKeySchema,
  value: z.unknown(),
  ttlMs: z.number().int().positive().optional(),
  ifVersion: z.number().int().nonnegative().optional(),
});

/** Delete one state entry. Reply: `{ key, deleted }`. */
export const StateDeleteRequestSchema = requestSchema('state.delete', {
  session: SessionIdSchema,
  key: StateKeySchema,
});

/** The session and state requests, for the client message union. */
export const SESSION_REQUEST_SCHEMAS = [
  SessionListRequestSchema,
  SessionGetRequestSchema,
  SessionDeleteRequestSchema,
  StateGetRequestSchema,
  StateSetRequestSchema,
  StateDeleteRequestSchema,
] as const;

/** Their replies. */
export const SESSION_REPLY_SCHEMAS = [
  reply('session.list', pageSchema(SessionSchema).shape),
  reply('session.get', { session: SessionDetailSchema }),
  reply('session.delete', { session: z.string() }),
  reply('state.get', { entry: StateValueSchema }),
  reply('state.set', { key: z.string(), version: z.number().int().positive() }),
  reply('state.delete', { key: z.string(), deleted: z.boolean() }),
] as const;
