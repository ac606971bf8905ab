import {
  PageQuerySchema,
  ProcessCreateRequestSchema,
  ProcessStateSchema,
  RefSchema,
  RunStatusSchema,
} from '@mci/protocol';
import { z } from 'zod';

// HTTP request shapes (the MCI process API). Bodies are checked like WebSocket requests: unknown
// fields are refused, and a bad field is a 400 naming it.

const timeout = z
  .union(
    [
      z
        .number()
        .int('timeout must be a positive integer (ms) or null')
        .positive('timeout must be a positive integer (ms) or null'),
      z.null(),
    ],
    { error: 'timeout must be a positive integer (ms) or null' },
  )
  .optional();

/**
 * `POST /processes` body: the fields of the WebSocket `process.create` request, plus `timeout` (the
 * MCI process API's name of `timeoutMs`; give one of them) and `block` (answer once the run is over).
 * The trace context comes in the `traceparent`/`tracestate` headers, not the body.
 */
export const CreateProcessBodySchema = ProcessCreateRequestSchema.omit({
  type: true,
  id: true,
  traceparent: true,
  tracestate: true,
})
  .extend({ timeout, block: z.boolean().optional() })
  .refine((body) => body.timeout === undefined || body.timeoutMs === undefined, {
    message: 'give timeout or timeoutMs, not both',
    path: ['timeoutMs'],
  });
/** @see CreateProcessBodySchema */
export type CreateProcessBody = z.infer<typeof CreateProcessBodySchema>;

/** `POST /processes/:pid/signals/:signal` body (`{}` or empty for kill). */
export const SignalBodySchema = z.strictObject({
  force: z.boolean().optional(),
  block: z.boolean().optional(),
});

/** The signal of `POST /processes/:pid/signals/:signal`. */
export const SignalParamSchema = z.object({ signal: z.enum(['kill', 'run']) });

/**
 * `GET /processes` query: the filters and the page (`limit` 1-100, `cursor`). `status=null` lists
 * processes without an outcome yet.
 */
export const ListQuerySchema = PageQuerySchema.extend({
  state: ProcessStateSchema.optional(),
  status: z.union([RunStatusSchema, z.literal('null')]).optional(),
  ref: RefSchema.optional(),
});
