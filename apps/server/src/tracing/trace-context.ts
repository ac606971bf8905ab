import { type Context, context, propagation } from '@opentelemetry/api';

/** The W3C Trace Context fields a caller may send: `traceparent` and optionally `tracestate`. */
export interface TraceCarrier {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

const getter = {
  keys: (carrier: TraceCarrier) => Object.keys(carrier),
  get: (carrier: TraceCarrier, key: string) => {
    const value = carrier[key as keyof TraceCarrier];
    return typeof value === 'string' ? value : undefined;
  },
};

/**
 * The context a caller's `traceparent`/`tracestate` continue: its span as the remote parent of the
 * spans made under it. Without a `traceparent` the active context (an HTTP request's span, say); a
 * malformed one is ignored by the propagator (the spans go on under the active context, or start a
 * new trace). Without a started SDK
 * the propagator is a no-op and this is the active context.
 * @see https://www.w3.org/TR/trace-context/
 */
export function continuedContext(carrier: TraceCarrier | undefined): Context {
  const active = context.active();
  if (carrier?.traceparent === undefined) return active;
  return propagation.extract(active, carrier, getter);
}

/** Runs `work` with the context `carrier` continues active (see {@link continuedContext}). */
export function withCallerContext<T>(carrier: TraceCarrier | undefined, work: () => T): T {
  if (carrier?.traceparent === undefined) return work();
  return context.with(continuedContext(carrier), work);
}

/** `traceparent` and `tracestate` of `ctx`, to send with a request (empty without a span). */
export function traceHeaders(ctx: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/**
 * The trace context in an MCP request's `params._meta` (`traceparent`, `tracestate`); values that
 * are not strings are ignored.
 * @see https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/#context-propagation
 */
export function metaCarrier(meta: Record<string, unknown> | undefined): TraceCarrier {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return { traceparent: text(meta?.traceparent), tracestate: text(meta?.tracestate) };
}
