import { describeIssues } from '@mci/protocol';
import type { z } from 'zod';
import { ServerError } from '../processes/server-error.ts';

/**
 * Parses a request part at the edge. @throws ServerError `VALIDATION` naming the bad field (`path`)
 * and, in the message, where it was (`body`, `query`, `params`).
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problem = describeIssues(result.error.issues);
  return throwValidation(`${where}: ${problem.message}`, problem.path);
}

function throwValidation(message: string, path: string | undefined): never {
  throw new ServerError('VALIDATION', message, path === undefined ? undefined : { path });
}
