import type { MiddlewareHandler } from 'hono';
import { MemoryStore, rateLimiter } from 'hono-rate-limiter';
import { ServerError } from '../processes/server-error.ts';
import type { HttpEnv } from './http-env.ts';
import { sendError } from './http-error.ts';

/**
 * Each principal's requests per one-second window, shared by HTTP requests, WebSocket messages and
 * the calls of an MCP batch: one budget, whichever way a client comes in.
 */
export class RequestBudget {
  readonly perSecond: number;
  readonly store = new MemoryStore<HttpEnv>();

  constructor(perSecond: number) {
    this.perSecond = perSecond;
    this.store.init({ windowMs: 1000 } as Parameters<MemoryStore<HttpEnv>['init']>[0]);
  }

  /** Counts `count` requests of `principal`; false once it is past its budget for this second. */
  take(principal: string, count = 1): boolean {
    let hits = 0;
    for (let i = 0; i < count; i++) hits = this.store.increment(principal).totalHits;
    return hits <= this.perSecond;
  }

  /** The error of a request past the budget. */
  error(): ServerError {
    return new ServerError(
      'RATE_LIMITED',
      `more than ${this.perSecond} requests in one second; retry after the Retry-After delay`,
    );
  }
}

/**
 * Limits each principal (by its id; every caller is one principal in local mode) to the budget's
 * requests per one-second window. Past it: 429 `RATE_LIMITED` with `Retry-After` (seconds), the
 * standard `RateLimit` headers on every answer. Runs after authentication, which sets the principal.
 */
export function principalRateLimit(budget: RequestBudget): MiddlewareHandler<HttpEnv> {
  return rateLimiter<HttpEnv>({
    windowMs: 1000,
    limit: budget.perSecond,
    store: budget.store,
    standardHeaders: 'draft-7',
    keyGenerator: (c) => c.get('principal').id,
    handler: (c) => sendError(c, budget.error()),
  });
}

/** The number of JSON-RPC messages in an MCP POST body (a batch is an array); 1 when it cannot tell. */
export async function mcpMessageCount(request: Request): Promise<number> {
  if (request.method !== 'POST') return 1;
  try {
    const body: unknown = await request.clone().json();
    return Array.isArray(body) ? Math.max(1, body.length) : 1;
  } catch {
    return 1;
  }
}
