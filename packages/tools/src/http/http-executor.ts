import { type HttpExecution, renderStructured, renderTemplate } from '@mci/schema';
import { type ExecutionContext, renderField } from '../execution-context.ts';
import type { ToolResult } from '../tool-result.ts';
import type { HttpClient } from './http-client.ts';
import type { HttpAuth, HttpBody } from './http-request.ts';

/**
 * Runs an http tool: renders url, headers, params, body and auth (strings are templates; a value
 * that is exactly `{!!path!!}` inserts the raw JSON value), then sends the request with `client`.
 */
export async function executeHttp(
  execution: HttpExecution,
  ctx: ExecutionContext,
  client: HttpClient,
): Promise<ToolResult> {
  const render = <T>(field: string, value: T): T =>
    renderField(`execution.${field}`, () => renderStructured(value, ctx.template) as T);
  return client.send(
    {
      method: execution.method,
      url: renderField('execution.url', () => renderTemplate(execution.url, ctx.template)),
      headers: execution.headers && render('headers', execution.headers),
      params: execution.params && render('params', execution.params),
      body: execution.body && (render('body', execution.body) as HttpBody),
      auth: execution.auth && (render('auth', execution.auth) as HttpAuth),
      timeoutMs: execution.timeout_ms,
      attempts: execution.retries.attempts,
      backoffMs: execution.retries.backoff_ms,
    },
    ctx.signal,
  );
}
