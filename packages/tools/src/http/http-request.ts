/** An http auth block after templating. */
export type HttpAuth =
  | { type: 'apiKey'; in: 'header' | 'query'; name: string; value: string }
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | {
      type: 'oauth2';
      flow: 'clientCredentials';
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scopes?: readonly string[] | undefined;
    };

/** An http body after templating: json content is any JSON value, form an object, raw a string. */
export interface HttpBody {
  type: 'json' | 'form' | 'raw';
  content?: unknown;
}

/** Everything needed to send one http tool request, after templating. */
export interface HttpRequestSpec {
  method: string;
  url: string;
  headers?: Record<string, unknown> | undefined;
  params?: Record<string, unknown> | undefined;
  body?: HttpBody | undefined;
  auth?: HttpAuth | undefined;
  /** Bounds the whole request, retries included; 0 means no bound. */
  timeoutMs: number;
  /** Tries in all (1 = no retry). */
  attempts: number;
  /** Wait before the first retry, doubled for each further retry. */
  backoffMs: number;
}

/** The parts of a request ready for undici, auth not yet applied. */
export interface PreparedRequest {
  /** The URL with the params appended (and, for api keys in the query, the key). */
  url: URL;
  /** Header names as given; values stringified. */
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * Builds the URL (params appended with proper encoding: arrays repeat the key, objects are JSON),
 * the headers and the body. JSON bodies get `Content-Type: application/json`, form bodies
 * `application/x-www-form-urlencoded`, raw bodies `text/plain`, unless a Content-Type is given.
 *
 * @throws {TypeError} for a URL that does not parse.
 */
export function prepareRequest(spec: HttpRequestSpec): PreparedRequest {
  const url = new URL(spec.url);
  if (spec.params) {
    for (const name in spec.params) {
      if (!Object.hasOwn(spec.params, name)) continue;
      const value = spec.params[name];
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item !== undefined) url.searchParams.append(name, stringify(item));
      }
    }
  }
  const headers: Record<string, string> = {};
  if (spec.headers) {
    for (const name in spec.headers) {
      if (!Object.hasOwn(spec.headers, name)) continue;
      const value = spec.headers[name];
      if (value !== undefined && value !== null) headers[name] = stringify(value);
    }
  }
  let body: string | undefined;
  if (spec.body) {
    const { type, content } = spec.body;
    if (type === 'json') {
      body = typeof content === 'string' ? content : JSON.stringify(content ?? null);
      setDefaultHeader(headers, 'content-type', 'application/json');
    } else if (type === 'form') {
      const form = new URLSearchParams();
      if (typeof content === 'string') for (const [k, v] of new URLSearchParams(content)) form.append(k, v);
      else
        for (const [name, value] of Object.entries((content ?? {}) as Record<string, unknown>)) {
          for (const item of Array.isArray(value) ? value : [value]) form.append(name, stringify(item));
        }
      body = form.toString();
      setDefaultHeader(headers, 'content-type', 'application/x-www-form-urlencoded');
    } else {
      body = typeof content === 'string' ? content : content === undefined ? '' : stringify(content);
      setDefaultHeader(headers, 'content-type', 'text/plain');
    }
  }
  return { url, headers, body };
}

/** Sets a query parameter (replacing any of that name). */
export function setQueryParam(prepared: PreparedRequest, name: string, value: string): void {
  prepared.url.searchParams.set(name, value);
}

/** The path and query to send (`/data?id=7`). */
export function requestPath(prepared: PreparedRequest): string {
  return prepared.url.pathname + prepared.url.search;
}

/** The full URL of the request, for messages. */
export function requestHref(prepared: PreparedRequest): string {
  return prepared.url.href;
}

/** Sets a header unless one of that name (any case) is present. */
export function setDefaultHeader(headers: Record<string, string>, name: string, value: string): void {
  const lower = name.toLowerCase();
  if (!Object.keys(headers).some((key) => key.toLowerCase() === lower)) headers[name] = value;
}

/** Sets a header, replacing one of that name in any case. */
export function setHeader(headers: Record<string, string>, name: string, value: string): void {
  const lower = name.toLowerCase();
  for (const key of Object.keys(headers)) if (key.toLowerCase() === lower) delete headers[key];
  headers[name] = value;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
