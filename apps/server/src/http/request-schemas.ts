import { ProcessMetadataSchema, ProcessStateSchema, RefSchema, RunStatusSchema } from '@mci/protocol';
import { z } from 'zod';

// HTTP request shapes (the MCI process API). Bodies ignore unknown fields, as that API does; every
// known field is checked and a bad one is a 400 naming it.

const timeout = z
  .union(
    [
      z
        .number()
        .int('timeout must be a positive integer (ms) or null')
        .positive('timeout must be a positive integer (ms) or null'),
      z.null(),
    ],
    {
      error: 'timeout must be a positive integer (ms) or null',
    },
  )
  .optional();

/** `POST /processes` body. `timeout`: ms (positive integer) or `null` for the server maximum. */
export const CreateProcessBodySchema = z.object({
  code: z.string({ error: 'code is required and must be a string' }),
  ref: RefSchema.optional(),
  timeout,
  memoryLimitMb: z.number().int().positive().optional(),
  block: z.boolean().optional(),
  autorun: z.boolean().optional(),
  lang: z.string().min(1).max(32).optional(),
  metadata: ProcessMetadataSchema.optional(),
});
/** @see CreateProcessBodySchema */
export type CreateProcessBody = z.infer<typeof CreateProcessBodySchema>;

/** `POST /processes/:pid/signals/:signal` body (`{}` or empty for kill). */
export const SignalBodySchema = z.object({ force: z.boolean().optional(), block: z.boolean().optional() });

/** Path parameters naming a process and a run. */
export const PidParamSchema = z.object({ pid: z.coerce.number<string>().int().positive() });
export const RunParamSchema = z.object({
  pid: z.coerce.number<string>().int().positive(),
  n: z.coerce.number<string>().int().positive(),
});
export const SignalParamSchema = z.object({ signal: z.enum(['kill', 'run']) });

/** `GET /processes` query. `status=null` lists processes without an outcome yet. */
export const ListQuerySchema = z.object({
  state: ProcessStateSchema.optional(),
  status: z.union([RunStatusSchema, z.literal('null')]).optional(),
  ref: RefSchema.optional(),
});
