import { ClientError } from './client-error.ts';

/** The two addresses of one server: its WebSocket endpoint and its HTTP API base. */
export interface ServerUrls {
  /** `ws://host:port/ws` (or `wss://`). */
  ws: string;
  /** `http://host:port` (or `https://`), without a trailing slash. */
  http: string;
}

/**
 * Accepts `ws://host:port/ws`, `ws://host:port`, `http://host:port` or `host:port` and returns both
 * addresses of the server. A path other than `/` or `/ws` is kept as the WebSocket path (a server
 * behind a proxy prefix: `https://example.com/mci/ws`).
 * @throws ClientError `CONNECT_FAILED` when `url` is not a URL.
 */
export function resolveServerUrls(url: string): ServerUrls {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `ws://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch (error) {
    throw new ClientError('CONNECT_FAILED', `not a server URL: ${JSON.stringify(url)}`, { cause: error });
  }
  const secure = parsed.protocol === 'wss:' || parsed.protocol === 'https:';
  if (!['ws:', 'wss:', 'http:', 'https:'].includes(parsed.protocol)) {
    throw new ClientError(
      'CONNECT_FAILED',
      `unsupported URL scheme ${parsed.protocol} in ${url}: use ws://, wss://, http:// or https://`,
    );
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  const wsPath = path === '' ? '/ws' : path;
  const httpPath = wsPath.endsWith('/ws') ? wsPath.slice(0, -3) : path;
  return {
    ws: `${secure ? 'wss' : 'ws'}://${parsed.host}${wsPath}`,
    http: `${secure ? 'https' : 'http'}://${parsed.host}${httpPath}`,
  };
}
