import type { Hono } from 'hono';
import { ServerError } from '../processes/server-error.ts';
import type { HttpEnv } from './http-env.ts';

/** The realm of the server's bearer challenge. */
const REALM = 'mci';

/**
 * The `WWW-Authenticate` value of a 401: `Bearer realm="mci"` when no token was sent, and with
 * `error="invalid_token"` and its description when one was refused. It names no `resource_metadata`:
 * the server takes bearer tokens from its configuration and runs no OAuth authorization, so an MCP
 * client has nothing to discover.
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
export function bearerChallenge(tokenSent: boolean, message: string): string {
  if (!tokenSent) return `Bearer realm="${REALM}"`;
  return `Bearer realm="${REALM}", error="invalid_token", error_description="${message.replaceAll('"', "'")}"`;
}

/**
 * Answers the OAuth discovery paths (`/.well-known/oauth-protected-resource`,
 * `/.well-known/oauth-authorization-server`, `/.well-known/openid-configuration`, with or without a
 * path suffix) with 404 `NOT_FOUND` before authentication: the server publishes no OAuth metadata,
 * and the message tells an MCP client to send a bearer token instead. Register before the API's
 * authentication middleware.
 */
export function registerNoOAuthMetadata(app: Hono<HttpEnv>): void {
  app.all('/.well-known/*', () => {
    throw new ServerError(
      'NOT_FOUND',
      'this server publishes no OAuth metadata: send its API token as "Authorization: Bearer <token>"',
    );
  });
}
