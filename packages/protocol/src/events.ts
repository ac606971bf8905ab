import { z } from 'zod';
import { ApprovalSchema } from './approvals.ts';
import { CallSummarySchema } from './calls.ts';
import { IntentAttributesSchema, ProcessSnapshotSchema } from './snapshot.ts';

/**
 * The global event sequence number: one strictly increasing counter for the whole server (across
 * processes and streams), so a client that reconnects can subscribe with `since` and get exactly the
 * events it missed.
 */
export const SeqSchema = z.number().int().positive();

/** A process changed state (or outcome): its full snapshot, at the top level beside `type`. */
export const ProcessEventSchema = ProcessSnapshotSchema.extend({
  type: z.literal('process'),
  seq: SeqSchema,
});
/** @see ProcessEventSchema */
export type ProcessEvent = z.infer<typeof ProcessEventSchema>;

/**
 * The fields of an event about run `run` of process `pid` (`output`, `log`, `tool`, `approval`): its
 * `seq`, and where the process belongs when it has them: its `ref` and the `streamId` of the stream
 * that created it. Clients route these events by the fields themselves.
 */
const RunEventShape = {
  seq: SeqSchema,
  pid: z.number().int().positive(),
  run: z.number().int().positive(),
  ref: z.string().optional(),
  streamId: z.string().optional(),
};

/** The fields of an event about stream `streamId`: its `seq`, and the stream's `ref` when it has one. */
const StreamEventShape = {
  seq: SeqSchema,
  streamId: z.string(),
  ref: z.string().optional(),
};

/**
 * The program of run `run` of process `pid` called `output(value)`. `value` is in the output encoding
 * (see `encodeOutputValue`): JSON values as they are, the rest tagged (`{"$type": "bigint", ...}`).
 */
export const OutputEventSchema = z.object({
  type: z.literal('output'),
  ...RunEventShape,
  value: z.unknown(),
});
/** @see OutputEventSchema */
export type OutputEvent = z.infer<typeof OutputEventSchema>;

/** Console text written by the program (`console.log` -> stdout, `console.error` -> stderr). */
export const LogEventSchema = z.object({
  type: z.literal('log'),
  ...RunEventShape,
  stream: z.enum(['stdout', 'stderr']),
  text: z.string(),
});
/** @see LogEventSchema */
export type LogEvent = z.infer<typeof LogEventSchema>;

/**
 * The program finished one tool call (for live UIs): tool name, duration in ms, whether it failed,
 * and `call`, the call's summary as the audit records it (its position, decision, who decided, what
 * it returned; absent when the server keeps no audit).
 */
export const ToolEventSchema = z.object({
  type: z.literal('tool'),
  ...RunEventShape,
  name: z.string(),
  durationMs: z.number().nonnegative(),
  isError: z.boolean(),
  call: CallSummarySchema.optional(),
});
/** @see ToolEventSchema */
export type ToolEvent = z.infer<typeof ToolEventSchema>;

/**
 * A stream produced an exec intent (a fenced block with `exec=true`). `index` counts exec intents of
 * the stream from 0; `ref` is the stream's. Accepted intents carry the `pid` of the process created
 * for them; rejected ones (unsupported language, unclosed block) carry `rejected` with the reason and
 * are not run.
 */
export const IntentEventSchema = z.object({
  type: z.literal('intent'),
  ...StreamEventShape,
  index: z.number().int().nonnegative(),
  pid: z.number().int().positive().optional(),
  lang: z.string(),
  attributes: IntentAttributesSchema,
  rejected: z.string().optional(),
});
/** @see IntentEventSchema */
export type IntentEvent = z.infer<typeof IntentEventSchema>;

/**
 * A stream has ended and all its processes are idle: the summary of every process it created (in
 * intent order) and `text`, the response pipe (see `formatResults`) to hand back to the model.
 */
export const StreamResultEventSchema = z.object({
  type: z.literal('stream.result'),
  ...StreamEventShape,
  processes: z.array(ProcessSnapshotSchema),
  text: z.string(),
});
/** @see StreamResultEventSchema */
export type StreamResultEvent = z.infer<typeof StreamResultEventSchema>;

/**
 * An approval of process `pid` was asked for (`pending`: the process is `suspended`) or decided
 * (`approved`, `denied`, `expired`, `canceled`); see docs/approvals.md. Sent to those who see the
 * process.
 */
export const ApprovalEventSchema = z.object({
  type: z.literal('approval'),
  ...RunEventShape,
  approval: ApprovalSchema,
});
/** @see ApprovalEventSchema */
export type ApprovalEvent = z.infer<typeof ApprovalEventSchema>;

/** Every server -> client event, discriminated by `type`; each carries the global `seq`. */
export const ServerEventSchema = z.discriminatedUnion('type', [
  ProcessEventSchema,
  OutputEventSchema,
  LogEventSchema,
  ToolEventSchema,
  IntentEventSchema,
  StreamResultEventSchema,
  ApprovalEventSchema,
]);
/** @see ServerEventSchema */
export type ServerEvent = z.infer<typeof ServerEventSchema>;
/** The `type` of a {@link ServerEvent}. */
export type ServerEventType = ServerEvent['type'];
