import { z } from 'zod';

/** A request id chosen by the client (a string up to 128 characters or an integer); echoed in the reply. */
export const RequestIdSchema = z.union([z.string().max(128), z.number().int()]);
/** @see RequestIdSchema */
export type RequestId = z.infer<typeof RequestIdSchema>;

/**
 * The schema of the reply to request type `request`: `{ type: 'reply', id?, request, result }`, with
 * `result` an object of the shape `result`.
 */
export const replySchema = <R extends string, S extends z.ZodRawShape>(request: R, result: S) =>
  z.object({
    type: z.literal('reply'),
    id: RequestIdSchema.optional(),
    request: z.literal(request),
    result: z.object(result),
  });
