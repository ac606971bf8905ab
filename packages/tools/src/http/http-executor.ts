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
  // A field without templates goes as loaded: the request is built from it without changing it.
  const render = <T>(field: string, value: T): T =>
    isStatic(value) ? value : renderField(`execution.${field}`, () => renderStructured(value, ctx.template) as T);
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

// Loaded tool definitions never change, so whether a field holds a template is worked out once.
const staticValues = new WeakMap<object, boolean>();

/** True when no string inside `value` can be a template (none has `{` or `@`). */
function isStatic(value: unknown): boolean {
  if (typeof value === 'string') return value.indexOf('{') < 0 && value.indexOf('@') < 0;
  if (typeof value !== 'object' || value === null) return true;
  let known = staticValues.get(value);
  if (known === undefined) {
    // A circular value is left to renderStructured, which reports it.
    staticValues.set(value, false);
    known = Object.values(value).every(isStatic);
    staticValues.set(value, known);
  }
  return known;
}
