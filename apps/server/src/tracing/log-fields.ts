import { isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * The trace fields of a log line written while a span is active: `trace_id` and `span_id` (hex, as
 * in `traceparent`); nothing outside a span or when tracing is off. A pino `mixin`: pino merges the
 * line's fields into the object returned, so each call returns a new one.
 * @see https://opentelemetry.io/docs/specs/otel/compatibility/logging_trace_context/
 */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const ids = span.spanContext();
  return isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}
