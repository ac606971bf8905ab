import { type Dispatcher, request } from 'undici';

/** OAuth2 client-credentials settings, after templating. */
export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes?: readonly string[] | undefined;
}

interface CachedToken {
  accessToken: string;
  /** `performance.now()` time after which the token is not used any more; Infinity without `expires_in`. */
  refreshAt: number;
}

/** Tokens are refreshed this long before `expires_in` runs out: 10% of the lifetime, at most 30 s. */
const REFRESH_MARGIN_MAX_MS = 30_000;

/**
 * Caches OAuth2 client-credentials tokens per (tokenUrl, clientId, clientSecret, scopes), with at most
 * one token request in flight per key (concurrent callers share it).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export class OAuth2TokenCache {
  readonly #tokens = new Map<string, CachedToken>();
  readonly #inFlight = new Map<string, Promise<CachedToken>>();
  readonly #dispatcher: Dispatcher;
  /** Token requests made so far (for metadata and tests). */
  requests = 0;

  constructor(dispatcher: Dispatcher) {
    this.#dispatcher = dispatcher;
  }

  /**
   * A valid access token: the cached one, or a fresh one from the token endpoint.
   *
   * @param timeoutMs bounds a token request this call starts (0: unbounded).
   * @throws {Error} when the token endpoint fails or answers without `access_token`.
   */
  async token(credentials: ClientCredentials, timeoutMs: number): Promise<string> {
    const key = keyOf(credentials);
    const cached = this.#tokens.get(key);
    if (cached && performance.now() < cached.refreshAt) return cached.accessToken;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#fetch(credentials, timeoutMs).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return (await pending).accessToken;
  }

  /** Drops `accessToken` from the cache (after a 401), unless a newer token replaced it already. */
  invalidate(credentials: ClientCredentials, accessToken: string): void {
    const key = keyOf(credentials);
    if (this.#tokens.get(key)?.accessToken === accessToken) this.#tokens.delete(key);
  }

  async #fetch(credentials: ClientCredentials, timeoutMs: number): Promise<CachedToken> {
    this.requests++;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    });
    if (credentials.scopes?.length) form.set('scope', credentials.scopes.join(' '));
    const started = performance.now();
    const response = await request(credentials.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      dispatcher: this.#dispatcher,
      signal: timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined,
    }).catch((error: unknown) => {
      throw new Error(`OAuth2 token request to ${credentials.tokenUrl} failed: ${(error as Error).message}`, {
        cause: error,
      });
    });
    const text = await response.body.text();
    if (response.statusCode >= 400) {
      throw new Error(
        `OAuth2 token request to ${credentials.tokenUrl} failed with HTTP ${response.statusCode}: ${text.slice(0, 200)}`,
      );
    }
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new Error(
        `OAuth2 token endpoint ${credentials.tokenUrl} did not answer JSON: ${text.slice(0, 200)}`,
      );
    }
    if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
      throw new Error(`OAuth2 token endpoint ${credentials.tokenUrl} answered without access_token`);
    }
    const expiresInMs = Number(parsed.expires_in) * 1000;
    const refreshAt =
      Number.isFinite(expiresInMs) && expiresInMs > 0
        ? started + expiresInMs - Math.min(REFRESH_MARGIN_MAX_MS, expiresInMs / 10)
        : Number.POSITIVE_INFINITY;
    const token = { accessToken: parsed.access_token, refreshAt };
    this.#tokens.set(keyOf(credentials), token);
    return token;
  }
}

function keyOf(c: ClientCredentials): string {
  return JSON.stringify([c.tokenUrl, c.clientId, c.clientSecret, [...(c.scopes ?? [])].sort()]);
}
