import type { ErrorBody } from '@mci/protocol';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import { type ServerError, toServerError } from '../processes/server-error.ts';

/**
 * Sends `error` (any throw) as the one error body `{ error, code, message, path?, retryAfter? }` with
 * the code's status, and `Retry-After` (seconds) when the error knows it. Unknown throws become 500
 * `INTERNAL` and are logged with their stack.
 */
export function sendError(c: Context, error: unknown, logger?: Logger): Response {
  const serverError: ServerError = toServerError(error);
  if (serverError.code === 'INTERNAL')
    logger?.error({ err: error, method: c.req.method, path: c.req.path }, 'HTTP request failed');
  const body: ErrorBody = serverError.toJSON();
  if (serverError.retryAfter !== undefined) c.header('Retry-After', String(serverError.retryAfter));
  return c.json(body, serverError.status as ContentfulStatusCode);
}
