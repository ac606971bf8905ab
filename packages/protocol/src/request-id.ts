import { z } from 'zod';

/** A request id chosen by the client (a string up to 128 characters or an integer); echoed in the reply. */
export const RequestIdSchema = z.union([z.string().max(128), z.number().int()]);
/** @see RequestIdSchema */
export type RequestId = z.infer<typeof RequestIdSchema>;
