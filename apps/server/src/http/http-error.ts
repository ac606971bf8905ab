import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type ServerError, toServerError } from '../processes/server-error.ts';

/** The JSON body of every HTTP error: `{ error: message, code, path? }`. */
export interface HttpErrorBody {
  error: string;
  code: string;
  path?: string;
}

/** Sends `error` (any throw; unknown ones become 500 `INTERNAL`) as `{ error, code, path? }`. */
export function sendError(c: Context, error: unknown): Response {
  const serverError: ServerError = toServerError(error);
  const body: HttpErrorBody = { error: serverError.message, code: serverError.code };
  if (serverError.path !== undefined) body.path = serverError.path;
  return c.json(body, serverError.status as ContentfulStatusCode);
}
