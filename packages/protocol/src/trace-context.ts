import { z } from 'zod';

/** Longest `traceparent` accepted (version 00 is 55 characters; later versions may add fields). */
export const MAX_TRACEPARENT_LENGTH = 256;
/** Longest `tracestate` accepted (32 list members of the spec's recommended 512 characters). */
export const MAX_TRACESTATE_LENGTH = 512;

/**
 * The W3C Trace Context of the caller, as optional fields of a request (`process.create`,
 * `stream.start`): the server's spans of the work continue the caller's trace. Only their length
 * is checked here; a value that does not parse as Trace Context is ignored (a new trace starts).
 * @see https://www.w3.org/TR/trace-context/#traceparent-header
 */
export const TraceContextFieldsSchema = z.object({
  traceparent: z.string().max(MAX_TRACEPARENT_LENGTH).optional(),
  tracestate: z.string().max(MAX_TRACESTATE_LENGTH).optional(),
});
/** @see TraceContextFieldsSchema */
export type TraceContextFields = z.infer<typeof TraceContextFieldsSchema>;
