import { z } from 'zod';

/** A request id chosen by the client (a string up to 128 characters or an integer); echoed in the reply. */
export const RequestIdSchema = z.union([z.string().max(128), z.number().int()]);
/** @see RequestIdSchema */
export type RequestId = z.infer<typeof RequestIdSchema>;

/**
 * The schema of a client request of type `type`: a strict object with `type`, the optional `id` the
 * reply echoes, and the fields of `shape`.
 */
export const requestSchema = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject({ type: z.literal(type), id: RequestIdSchema.optional(), ...shape });

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
