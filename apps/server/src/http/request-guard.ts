import type { MiddlewareHandler } from 'hono';
import { ServerError } from '../processes/server-error.ts';
import type { OriginPolicy, PolicyRefusal } from './origin-policy.ts';

/** The {@link ServerError} of a refused request: 421 for its `Host`, 403 for its `Origin`. */
export function refusalError(refusal: PolicyRefusal): ServerError {
  return new ServerError(refusal.reason === 'host' ? 'MISDIRECTED_REQUEST' : 'FORBIDDEN', refusal.message);
}

/**
 * Middleware that refuses, before anything else runs, a request whose `Host` the server does not
 * answer to (421) or whose `Origin` is present and not allowed (403). Every route passes through it,
 * `/healthz` included.
 */
export function requestGuard(policy: OriginPolicy): MiddlewareHandler {
  return async (c, next) => {
    const refusal = policy.refusal({ host: c.req.header('host'), origin: c.req.header('origin') });
    if (refusal) throw refusalError(refusal);
    await next();
  };
}

/**
 * Middleware of JSON endpoints: a request with a body must say `Content-Type: application/json`
 * (415 `UNSUPPORTED_MEDIA_TYPE` otherwise). A browser sends `text/plain` across origins without a
 * preflight, so accepting it would let any page act on the server.
 */
export const requireJson: MiddlewareHandler = async (c, next) => {
  const type = c.req.header('content-type');
  const hasBody =
    type !== undefined ||
    Number(c.req.header('content-length') ?? 0) > 0 ||
    c.req.header('transfer-encoding') !== undefined;
  if (hasBody && mediaType(type) !== 'application/json') {
    throw new ServerError(
      'UNSUPPORTED_MEDIA_TYPE',
      `the body must be JSON with Content-Type: application/json, got ${type === undefined ? 'no Content-Type' : JSON.stringify(type)}`,
    );
  }
  await next();
};

/** The media type of a `Content-Type` value, lower-cased, without parameters. */
function mediaType(value: string | undefined): string | undefined {
  return value?.split(';')[0]?.trim().toLowerCase();
}
