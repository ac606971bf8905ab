import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { MiddlewareHandler } from 'hono';
import { isTracing } from './start-tracing.ts';
import { tracer } from './tracer.ts';

const headerGetter = {
  keys: (headers: Headers) => [...headers.keys()],
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
};

/**
 * Hono middleware: each HTTP request in a server span (`POST /processes`, named by its route), the
 * child of the caller's `traceparent`/`tracestate` headers when they are valid (a malformed one is
 * ignored: a new trace). The rest of the request runs with that span active, so a process it creates
 * keeps it as the parent of its run. Passes straight through when tracing is off.
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-server
 */
export function traceRequests(): MiddlewareHandler {
  return async (c, next) => {
    if (!isTracing()) return next();
    const parent = propagation.extract(context.active(), c.req.raw.headers, headerGetter);
    const method = c.req.method;
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: c.req.path,
          [ATTR_URL_SCHEME]: c.req.url.startsWith('https:') ? 'https' : 'http',
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = c.req.routePath;
      if (route && route !== '/*') {
        span.updateName(`${method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      const status = c.res.status;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
