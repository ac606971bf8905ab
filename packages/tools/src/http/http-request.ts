import { cachedParse } from './cached-parse.ts';

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

/** A parsed URL, as far as a request needs it. Shared through a cache: never change one. */
interface ParsedUrl {
  readonly href: string;
  readonly origin: string;
  readonly pathname: string;
  /** `?` and the query, or empty. */
  readonly search: string;
}

/** The parts of a request ready for undici, auth not yet applied. */
export interface PreparedRequest {
  /** The URL as given (parsed once per distinct string). */
  url: ParsedUrl;
  /** The query string to send: `?` and the query (the URL's own one plus the params), or empty. */
  query: string;
  /** Header names as given; values stringified. */
  headers: Record<string, string>;
  body: string | undefined;
}

/** Parses a URL with the WHATWG parser; tools with a static URL (most) parse theirs once. */
const parseUrl = cachedParse(256, (url): ParsedUrl => {
  const { href, origin, pathname, search } = new URL(url);
  return Object.freeze({ href, origin, pathname, search });
});

/**
 * Builds the URL (params appended with proper encoding: arrays repeat the key, objects are JSON),
 * the headers and the body. JSON bodies get `Content-Type: application/json`, form bodies
 * `application/x-www-form-urlencoded`, raw bodies `text/plain`, unless a Content-Type is given.
 *
 * @throws {TypeError} for a URL that does not parse.
 */
export function prepareRequest(spec: HttpRequestSpec): PreparedRequest {
  const url = parseUrl(spec.url);
  // Appending to a URL's searchParams re-serializes its whole query the URLSearchParams way; doing
  // the same on a URLSearchParams of its own gives the same query without a URL object per request.
  let search: URLSearchParams | undefined;
  if (spec.params) {
    for (const name in spec.params) {
      if (!Object.hasOwn(spec.params, name)) continue;
      const value = spec.params[name];
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item === undefined) continue;
        search ??= new URLSearchParams(url.search);
        search.append(name, stringify(item));
      }
    }
  }
  const query = search ? withQuestionMark(search.toString()) : url.search;
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
  return { url, query, headers, body };
}

/** Sets a query parameter (replacing any of that name), as `URL.searchParams.set` would. */
export function setQueryParam(prepared: PreparedRequest, name: string, value: string): void {
  const search = new URLSearchParams(prepared.query);
  search.set(name, value);
  prepared.query = withQuestionMark(search.toString());
}

/** The path and query to send (`/data?id=7`). */
export function requestPath(prepared: PreparedRequest): string {
  return prepared.url.pathname + prepared.query;
}

/** The full URL of the request, for messages. */
export function requestHref(prepared: PreparedRequest): string {
  if (prepared.query === prepared.url.search) return prepared.url.href;
  const url = new URL(prepared.url.href);
  url.search = prepared.query;
  return url.href;
}

function withQuestionMark(query: string): string {
  return query === '' ? '' : `?${query}`;
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
