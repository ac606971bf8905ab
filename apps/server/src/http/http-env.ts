import type { Principal } from '../auth/principal.ts';

/** Hono environment of the HTTP API: the authenticated principal of each request. */
export interface HttpEnv {
  Variables: { principal: Principal };
}
