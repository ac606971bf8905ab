import type { MiddlewareHandler } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import { ServerError } from '../processes/server-error.ts';
import type { HttpEnv } from './http-env.ts';
import { sendError } from './http-error.ts';

/**
 * Limits each principal (by its id; every caller is one principal in local mode) to `perSecond` HTTP
 * requests per one-second window. Past it: 429 `RATE_LIMITED` with `Retry-After` (seconds), the
 * standard `RateLimit` headers on every answer. Runs after authentication, which sets the principal.
 */
export function principalRateLimit(perSecond: number): MiddlewareHandler<HttpEnv> {
  return rateLimiter<HttpEnv>({
    windowMs: 1000,
    limit: perSecond,
    standardHeaders: 'draft-7',
    keyGenerator: (c) => c.get('principal').id,
    handler: (c) =>
      sendError(
        c,
        new ServerError(
          'RATE_LIMITED',
          `more than ${perSecond} requests in one second; retry after the Retry-After delay`,
        ),
      ),
  });
}
