import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { isTracing } from './start-tracing.ts';
import { continuedContext, type TraceCarrier } from './trace-context.ts';
import { tracer } from './tracer.ts';

/**
 * Runs the handling of one request that is not an HTTP request (a WebSocket `process.create` or
 * `stream.start`, an MCP `tools/call`) in a server span named `name`, the child of the caller's
 * trace context when `carrier` holds a valid `traceparent` (else of the active context, or a new
 * trace). The span ends when `work` settles. Runs `work` plainly when tracing is off.
 */
export function traceMessage<R>(
  name: string,
  carrier: TraceCarrier | undefined,
  attributes: Record<string, string | number>,
  work: () => R,
): R {
  if (!isTracing()) return work();
  const parent = continuedContext(carrier);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const failed = (error: unknown) => {
    span.setStatus({ code: SpanStatusCode.ERROR });
    const code = (error as { code?: unknown } | null)?.code;
    span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : 'Error');
  };
  let result: R;
  try {
    result = context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    failed(error);
    span.end();
    throw error;
  }
  if (!(result instanceof Promise)) {
    span.end();
    return result;
  }
  return result.then(
    (value: unknown) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(error);
      span.end();
      throw error;
    },
  ) as R;
}
