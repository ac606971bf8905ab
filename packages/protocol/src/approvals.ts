import { z } from 'zod';

/** ISO 8601 timestamp. */
const TimestampSchema = z.iso.datetime();

/**
 * What a policy rule decides for a tool call or a `fetch` (see docs/approvals.md): `allow` acts at
 * once, `ask` suspends the process until a person approves or denies, `deny` rejects the call in the
 * sandbox with `code` `POLICY_DENIED`.
 */
export const PolicyDecisionSchema = z.enum(['allow', 'ask', 'deny']);
/** @see PolicyDecisionSchema */
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;

/**
 * Where an approval is: `pending` until decided; `approved` or `denied` by a person; `expired` when
 * nobody decided within the server's `approvals.timeoutMs`; `canceled` when its process was killed.
 */
export const ApprovalStateSchema = z.enum(['pending', 'approved', 'denied', 'expired', 'canceled']);
/** @see ApprovalStateSchema */
export type ApprovalState = z.infer<typeof ApprovalStateSchema>;

/**
 * A request for a person to decide one tool call (or `fetch`) of a run before it acts. `position` is
 * the call's place in the run's call log (0-based): the resumed run acts on the approved call there.
 */
export const ApprovalSchema = z.object({
  id: z.string(),
  pid: z.number().int().positive(),
  run: z.number().int().positive(),
  /** The owner of the process (a principal id). */
  principal: z.string(),
  kind: z.enum(['tool', 'fetch']),
  tool: z.string().optional(),
  input: z.unknown().optional(),
  method: z.string().optional(),
  url: z.string().optional(),
  position: z.number().int().nonnegative(),
  state: ApprovalStateSchema,
  createdAt: TimestampSchema,
  expiresAt: TimestampSchema,
  decidedAt: TimestampSchema.optional(),
  /** The principal who decided (absent for `expired`). */
  decidedBy: z.string().optional(),
  reason: z.string().optional(),
});
/** @see ApprovalSchema */
export type Approval = z.infer<typeof ApprovalSchema>;

/** A page of `GET /approvals`, oldest first; `nextCursor` (absent on the last page) asks for the next. */
export const ApprovalPageSchema = z.object({
  items: z.array(ApprovalSchema),
  nextCursor: z.string().optional(),
});
/** @see ApprovalPageSchema */
export type ApprovalPage = z.infer<typeof ApprovalPageSchema>;
