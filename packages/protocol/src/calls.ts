import { z } from 'zod';
import { ApprovalStateSchema } from './approvals.ts';

/**
 * Who decided that a call may act (see docs/operations.md, "Audit"): a policy decision (`allow`,
 * `ask`, `deny`) or, for a `fetch` no policy rule matches, `egress` (the server's `allowNet` rules).
 */
export const CallDecisionSchema = z.enum(['allow', 'ask', 'deny', 'egress']);
/** @see CallDecisionSchema */
export type CallDecision = z.infer<typeof CallDecisionSchema>;

/**
 * What a call returned, summarized: `bytes` of its JSON (a `fetch`: of its body), whether the tool
 * said it failed (`isError`), the types of its content items (a `fetch`: its `content-type`), the
 * HTTP `status` of a `fetch`, and `value`, the whole result when its JSON fits the server's
 * `limits.auditValueBytes` (else `truncated` is true and `value` is absent).
 */
export const CallResultSchema = z.object({
  bytes: z.number().int().nonnegative(),
  isError: z.boolean(),
  contentTypes: z.array(z.string()),
  status: z.number().int().optional(),
  value: z.unknown().optional(),
  truncated: z.literal(true).optional(),
});
/** @see CallResultSchema */
export type CallResult = z.infer<typeof CallResultSchema>;

/** The approval a call waited for, and who decided it. */
export const CallApprovalSchema = z.object({
  id: z.string(),
  state: ApprovalStateSchema,
  decidedBy: z.string().optional(),
  decidedAt: z.string().optional(),
  reason: z.string().optional(),
});
/** @see CallApprovalSchema */
export type CallApproval = z.infer<typeof CallApprovalSchema>;

/**
 * One call of a run, without its input and result value (what the `tool` event carries). `position`
 * is the call's place in the run (0-based, in the order the program made its calls); `ok` is false
 * when the call rejected in the sandbox (refused, failed, or an `isError` result), with `error`.
 * `rule` is the index of the policy rule that decided (absent: the default policy or no rule).
 */
export const CallSummarySchema = z.object({
  position: z.number().int().nonnegative(),
  kind: z.enum(['tool', 'fetch']),
  /** The tool's name, or `fetch`. */
  name: z.string(),
  startedAt: z.string(),
  durationMs: z.number().nonnegative(),
  ok: z.boolean(),
  result: CallResultSchema.omit({ value: true }).optional(),
  error: z.object({ message: z.string(), code: z.string().optional() }).optional(),
  decision: CallDecisionSchema,
  rule: z.number().int().nonnegative().optional(),
  approval: CallApprovalSchema.optional(),
});
/** @see CallSummarySchema */
export type CallSummary = z.infer<typeof CallSummarySchema>;

/**
 * One call of run `run` of process `pid` as the audit keeps it: its summary, its input (the server's
 * secrets taken out; a `fetch`: `{ method, url, body? }`) and its result. An input whose JSON is
 * larger than `limits.auditValueBytes` is cut: `input` holds its first bytes as a string and
 * `inputTruncated` is true. `inputBytes` is the size of the whole input's JSON.
 */
export const CallRecordSchema = CallSummarySchema.extend({
  pid: z.number().int().positive(),
  run: z.number().int().positive(),
  input: z.unknown(),
  inputBytes: z.number().int().nonnegative(),
  inputTruncated: z.literal(true).optional(),
  result: CallResultSchema.optional(),
});
/** @see CallRecordSchema */
export type CallRecord = z.infer<typeof CallRecordSchema>;

/** A page of `GET /processes/:pid/runs/:n/calls`, by position; `nextCursor` (absent on the last page) asks for the next. */
export const CallPageSchema = z.object({
  items: z.array(CallRecordSchema),
  nextCursor: z.string().optional(),
});
/** @see CallPageSchema */
export type CallPage = z.infer<typeof CallPageSchema>;
