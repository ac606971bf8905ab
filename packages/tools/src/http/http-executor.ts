import { type HttpExecution, renderTemplate } from '@mci/schema';
import { type ExecutionContext, renderField } from '../execution-context.ts';
import { renderLoaded } from '../render-loaded.ts';
import type { ToolResult } from '../tool-result.ts';
import type { HttpClient } from './http-client.ts';
import type { HttpAuth, HttpBody } from './http-request.ts';

/**
 * Runs an http tool: renders url, headers, params, body and auth (strings are templates; a value
 * that is exactly `{!!path!!}` inserts the raw JSON value), then sends the request with `client`.
 *
 * @throws {TemplateError} at once (not through the promise) for a field that does not render; the
 *   runner turns it into an error result.
 */
export function executeHttp(
  execution: HttpExecution,
  ctx: ExecutionContext,
  client: HttpClient,
): Promise<ToolResult> {
  // Parts without templates go as loaded: the request is built from them without changing them.
  const render = <T>(field: string, value: T): T =>
    renderField(field, () => renderLoaded(value, ctx.template) as T);
  return client.send(
    {
      method: execution.method,
      url: renderField('execution.url', () => renderTemplate(execution.url, ctx.template)),
      headers: execution.headers && render('execution.headers', execution.headers),
      params: execution.params && render('execution.params', execution.params),
      body: execution.body && (render('execution.body', execution.body) as HttpBody),
      auth: execution.auth && (render('execution.auth', execution.auth) as HttpAuth),
      timeoutMs: execution.timeout_ms,
      attempts: execution.retries.attempts,
      backoffMs: execution.retries.backoff_ms,
    },
    ctx.signal,
  );
}
