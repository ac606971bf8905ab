import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { ConfigError } from '../config/config-error.ts';

/** Which pages may call the server (CORS) and which `Host` names it answers to. */
export interface OriginPolicy {
  /**
   * The `Access-Control-Allow-Origin` value for a request from `origin`: the origin itself when the
   * CORS list allows it, `*` when the list is `*`, else `null` (no CORS headers).
   */
  corsOrigin(origin: string): string | null;
  /**
   * Why a request may not act, or `undefined` when it may: its `Host` is not a name the server
   * listens on (`host`), or its `Origin`, when present, is neither in the CORS list nor the server's
   * own: the request's own `Host`, or the origin of a public URL (`origin`).
   */
  refusal(headers: { host: string | undefined; origin: string | undefined }): PolicyRefusal | undefined;
}

/** A refused request: `host` (421, a name the server does not answer to) or `origin` (403). */
export interface PolicyRefusal {
  reason: 'host' | 'origin';
  message: string;
}

/** Options of {@link createOriginPolicy}. */
export interface OriginPolicyOptions {
  /**
   * Origins allowed to call the HTTP API and open WebSockets from a page: exact origins
   * (`https://chat.example.com`), origins with any port (`http://localhost:*`), or `*` (any; refused
   * when tokens are configured). @default with no tokens: `http://localhost:*`, `http://127.0.0.1:*`
   * and `http://[::1]:*`; with tokens: none (only the server's own origin)
   */
  corsOrigins?: readonly string[] | undefined;
  /** True when tokens are configured. */
  tokens: boolean;
  /** The address the server listens on. */
  bindHost: string;
  /** URLs the server is reached at from outside (a reverse proxy): their hosts are accepted names. */
  publicUrls?: readonly string[] | undefined;
}

/** The CORS list of local mode (no tokens): pages served from this machine, any port. */
export const LOCAL_CORS_ORIGINS = ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'] as const;

interface OriginPattern {
  protocol: string;
  hostname: string;
  /** `*` for any port; '' for the scheme's default. */
  port: string;
}

/**
 * Builds the policy of one server.
 *
 * Host names (against DNS rebinding, the advice of the MCP specification for local servers): a
 * request's `Host` must be `localhost` (or a `*.localhost` name), an IP address, the bind address (the
 * machine's host name when that is `0.0.0.0` or `::`), or the host of a public URL. IP literals are accepted like Vite's dev server does: DNS rebinding needs
 * a name the attacker controls.
 *
 * @throws ConfigError `CONFIG_INVALID` for an origin that is not `*`, `scheme://host[:port|:*]`, or
 * `*` with tokens configured; for a public URL that is not a URL.
 * @see https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#security-warning
 */
export function createOriginPolicy(options: OriginPolicyOptions): OriginPolicy {
  const configured = options.corsOrigins ?? (options.tokens ? [] : LOCAL_CORS_ORIGINS);
  const any = configured.includes('*');
  if (any && options.tokens) {
    throw new ConfigError(
      'CONFIG_INVALID',
      'cors origin "*" is allowed only without tokens: list the origins of your pages instead',
      { path: 'cors.origins' },
    );
  }
  const patterns = configured.filter((entry) => entry !== '*').map(parseOriginPattern);
  const names = new Set(['localhost']);
  const bind = bareHost(options.bindHost);
  if (bind !== '' && isIP(bind) === 0) names.add(bind);
  // Bound to every interface: the machine's own name reaches it too.
  if (bind === '0.0.0.0' || bind === '::') names.add(hostname().toLowerCase());
  /** Origins of the public URLs: pages served there are the server's own, whatever `Host` a proxy sends. */
  const publicOrigins = new Set<string>();
  for (const url of options.publicUrls ?? []) {
    try {
      const parsed = new URL(url);
      names.add(bareHost(parsed.hostname));
      publicOrigins.add(parsed.origin);
    } catch (error) {
      throw new ConfigError('CONFIG_INVALID', `public URL ${JSON.stringify(url)} is not a URL`, {
        path: 'publicUrls',
        cause: error,
      });
    }
  }
  const listed = (origin: string) => {
    const url = parseOrigin(origin);
    return url !== undefined && patterns.some((pattern) => matches(pattern, url));
  };
  const hostAllowed = (host: string) => {
    const name = hostnameOf(host);
    return name !== undefined && (names.has(name) || name.endsWith('.localhost') || isIP(name) !== 0);
  };
  return {
    corsOrigin(origin) {
      if (any) return '*';
      return listed(origin) ? origin : null;
    },
    refusal({ host, origin }) {
      if (host === undefined || !hostAllowed(host)) {
        return {
          reason: 'host',
          message: `this server does not answer to the host ${JSON.stringify(host ?? '')}; use localhost, an IP address, or a configured public URL`,
        };
      }
      if (
        origin === undefined ||
        any ||
        listed(origin) ||
        publicOrigins.has(origin) ||
        sameOrigin(origin, host)
      )
        return undefined;
      return {
        reason: 'origin',
        message: `requests from the page origin ${JSON.stringify(origin)} are not allowed; allow it with --cors-origin or cors.origins`,
      };
    },
  };
}

/** Parses `scheme://host[:port]` or `scheme://host:*`. @throws ConfigError */
function parseOriginPattern(entry: string): OriginPattern {
  const anyPort = entry.endsWith(':*');
  const url = parseOrigin(anyPort ? entry.slice(0, -2) : entry);
  if (url === undefined || (!anyPort && url.origin !== entry.replace(/\/$/, ''))) {
    throw new ConfigError(
      'CONFIG_INVALID',
      `cors origin ${JSON.stringify(entry)} is not an origin: write scheme://host[:port] (or :* for any port), or *`,
      { path: 'cors.origins' },
    );
  }
  return { protocol: url.protocol, hostname: url.hostname, port: anyPort ? '*' : url.port };
}

function parseOrigin(origin: string): URL | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function matches(pattern: OriginPattern, url: URL): boolean {
  return (
    pattern.protocol === url.protocol &&
    pattern.hostname === url.hostname &&
    (pattern.port === '*' || pattern.port === url.port)
  );
}

/** A page served by this server itself: its origin's host is the request's `Host`. */
function sameOrigin(origin: string, host: string): boolean {
  const url = parseOrigin(origin);
  return url !== undefined && url.host === host.toLowerCase();
}

/** The hostname of a `Host` header (`127.0.0.1:7687` -> `127.0.0.1`, `[::1]:80` -> `::1`). */
function hostnameOf(host: string): string | undefined {
  if (/[@/?#\\\s]/.test(host)) return undefined;
  try {
    return bareHost(new URL(`http://${host}`).hostname);
  } catch {
    return undefined;
  }
}

function bareHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
}
