import { type Redactor, withoutCredentials } from '@mci/schema';
import {
  context,
  isSpanContextValid,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';

// OpenTelemetry HTTP client span attributes (stable semantic conventions).
// @see https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-client

const tracer = trace.getTracer('@mci/tools');

/**
 * Starts the client span of one http tool request (`GET`, kind client) under the active span, with
 * `url.full` free of the URL's password, credential query values and `redactor`'s secrets, and adds
 * its `traceparent`/`tracestate` to `headers` (replacing any the tool set), so the service behind
 * the tool continues the trace. Without a started SDK the span is a no-op and no header is added.
 */
export function startHttpSpan(
  method: string,
  url: URL,
  headers: Record<string, string>,
  redactor: Redactor | undefined,
): Span {
  // Without a password or a query there is nothing for `withoutCredentials` to take out.
  const safe = url.password === '' && url.search === '' ? url.href : withoutCredentials(url.href);
  const span = tracer.startSpan(method, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      [ATTR_URL_FULL]: redactor ? redactor.redact(safe) : safe,
      [ATTR_SERVER_ADDRESS]: url.hostname,
      [ATTR_SERVER_PORT]: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    },
  });
  if (isSpanContextValid(span.spanContext())) {
    for (const name of Object.keys(headers)) if (/^trace(?:parent|state)$/i.test(name)) delete headers[name];
    propagation.inject(trace.setSpan(context.active(), span), headers);
  }
  return span;
}

/** Ends an http tool request's span: its status code, or the error that ended it. */
export function endHttpSpan(span: Span, outcome: { status?: number; error?: string }): void {
  if (outcome.status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
  const type =
    outcome.error ??
    (outcome.status !== undefined && outcome.status >= 400 ? String(outcome.status) : undefined);
  if (type !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, type);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
