import type { Redactor } from '@mci/schema';
import type { Span } from '@opentelemetry/api';
import { Agent, type Dispatcher, interceptors } from 'undici';
import { raceAbort } from '../race-abort.ts';
import { messageOf } from '../tool-error.ts';
import { canceledResult, errorResult, type ToolResult } from '../tool-result.ts';
import {
  type HttpRequestSpec,
  type PreparedRequest,
  prepareRequest,
  requestHref,
  setHeader,
  setQueryParam,
} from './http-request.ts';
import { endHttpSpan, startHttpSpan } from './http-span.ts';
import { OAuth2TokenCache } from './oauth2-token-cache.ts';
import { readResponse } from './read-response.ts';
import { bodyTypeOf, mapBody } from './response-content.ts';

/** Status codes that are retried: request timeout, too many requests, every 5xx. */
const RETRY_STATUS_CODES = [408, 429, ...Array.from({ length: 100 }, (_, i) => 500 + i)];
/** Connection-level failures that are retried. */
const RETRY_ERROR_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
];
const ALL_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** The longest single wait between tries, also for a larger `Retry-After`. */
const MAX_RETRY_WAIT_MS = 60_000;
/** How much of an error body the error message quotes. */
const ERROR_BODY_CHARS = 500;

/**
 * Sends http tool requests with undici over one keep-alive connection pool (responses read whole
 * with {@link readResponse}): auth (api key, bearer,
 * basic, OAuth2 client credentials with a token cache and one refresh on 401), retries through
 * undici's retry interceptor (connection errors, 408, 429, 5xx; exponential backoff; `Retry-After`),
 * one timeout for the whole request (an `AbortController` ended by a timer or by the caller's
 * signal), a response body limit (the pool's `maxResponseSize`), and the mapping of the response to
 * a {@link ToolResult}. Each request is an OpenTelemetry client span that it sends as `traceparent`.
 */
export class HttpClient {
  readonly #agent: Agent;
  readonly #maxBodyBytes: number;
  readonly #retrying: Dispatcher;
  readonly #tokens: OAuth2TokenCache;
  readonly #redactor: Redactor | undefined;

  /**
   * @param maxBodyBytes larger response bodies are an error (undici ends them unread).
   * @param redactor takes secret values out of the URL a request's span records.
   */
  constructor(maxBodyBytes: number, redactor?: Redactor) {
    this.#maxBodyBytes = maxBodyBytes;
    this.#redactor = redactor;
    this.#agent = new Agent({ maxResponseSize: maxBodyBytes });
    this.#retrying = this.#agent.compose(interceptors.retry({ throwOnError: false }));
    this.#tokens = new OAuth2TokenCache(this.#agent);
  }

  /** Token requests made so far. */
  get tokenRequests(): number {
    return this.#tokens.requests;
  }

  /** Sends the request; never throws (failures and cancellation are error results). */
  async send(spec: HttpRequestSpec, signal?: AbortSignal): Promise<ToolResult> {
    const started = performance.now();
    let prepared: PreparedRequest;
    try {
      prepared = prepareRequest(spec);
    } catch (error) {
      return errorResult(`Invalid request: ${messageOf(error)} (url: ${spec.url})`);
    }
    // One signal ends the request, body included: the caller's abort or the timeout, whichever comes
    // first. A timer and a listener that are removed when the request ends (AbortSignal.timeout and
    // AbortSignal.any keep theirs until the timeout fires or the signals are collected).
    const controller = new AbortController();
    const limit = controller.signal;
    const abort = () => controller.abort(signal?.reason);
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
    let timedOut = false;
    const timer =
      spec.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort(new Error(`timed out after ${spec.timeoutMs} ms`));
          }, spec.timeoutMs)
        : undefined;
    let span: Span | undefined;
    try {
      const token = spec.auth ? await this.#authorize(prepared, spec, limit) : undefined;
      span = startHttpSpan(spec.method.toUpperCase(), prepared.url, prepared.headers, this.#redactor);
      let response = await this.#request(prepared, spec, limit);
      if (response.statusCode === 401 && spec.auth?.type === 'oauth2' && token !== undefined) {
        // The token may have been revoked early: fetch a new one and try once more.
        this.#tokens.invalidate(spec.auth, token);
        await this.#authorize(prepared, spec, limit);
        response = await this.#request(prepared, spec, limit);
      }
      const { body } = response;
      endHttpSpan(span, { status: response.statusCode });
      const metadata = {
        status_code: response.statusCode,
        response_time_ms: Math.round((performance.now() - started) * 100) / 100,
        headers: response.headers,
      };
      const mapped = mapBody(body, bodyTypeOf(headerValue(response.headers['content-type'])));
      if (response.statusCode >= 400) {
        const status = `HTTP ${response.statusCode}${response.statusText ? ` ${response.statusText}` : ''}`;
        const text = mapped.text.slice(0, ERROR_BODY_CHARS);
        return errorResult(text ? `${status}: ${text}` : status, metadata);
      }
      const result: ToolResult = { isError: false, content: mapped.content, metadata };
      if (mapped.structuredContent !== undefined) result.structuredContent = mapped.structuredContent;
      return result;
    } catch (error) {
      if (span) endHttpSpan(span, { error: errorType(error, signal?.aborted === true, timedOut) });
      if (signal?.aborted) return canceledResult(signal.reason);
      if (timedOut) {
        return errorResult(`Request to ${prepared.url.origin} timed out after ${spec.timeoutMs} ms`);
      }
      if ((error as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
        return errorResult(
          `Response body of ${requestHref(prepared)} is larger than the ${this.#maxBodyBytes}-byte limit`,
        );
      }
      return errorResult(`Request to ${requestHref(prepared)} failed: ${describe(error)}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
  }

  /** Closes the connection pool. */
  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** Applies the auth block to the prepared request; returns the OAuth2 token used, if any. */
  async #authorize(prepared: PreparedRequest, spec: HttpRequestSpec, signal: AbortSignal) {
    const auth = spec.auth;
    if (!auth) return undefined;
    switch (auth.type) {
      case 'apiKey':
        if (auth.in === 'query') setQueryParam(prepared, auth.name, auth.value);
        else setHeader(prepared.headers, auth.name, auth.value);
        return undefined;
      case 'bearer':
        setHeader(prepared.headers, 'Authorization', `Bearer ${auth.token}`);
        return undefined;
      case 'basic': {
        const credentials = Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64');
        setHeader(prepared.headers, 'Authorization', `Basic ${credentials}`);
        return undefined;
      }
      case 'oauth2': {
        // The token request is shared by concurrent callers: one caller's abort stops its wait only.
        const token = await raceAbort(this.#tokens.token(auth, spec.timeoutMs), signal);
        setHeader(prepared.headers, 'Authorization', `Bearer ${token}`);
        return token;
      }
    }
  }

  /** Sends the request (through the retry interceptor when the tool retries) and reads its body. */
  #request(prepared: PreparedRequest, spec: HttpRequestSpec, signal: AbortSignal) {
    const retrying = spec.attempts > 1;
    const options = {
      origin: prepared.url.origin,
      path: prepared.url.pathname + prepared.url.search,
      method: spec.method.toUpperCase() as Dispatcher.HttpMethod,
      headers: prepared.headers,
      body: prepared.body,
      // Read by undici's retry interceptor for this request only.
      ...(retrying
        ? {
            retryOptions: {
              maxRetries: spec.attempts - 1,
              minTimeout: spec.backoffMs,
              timeoutFactor: 2,
              maxTimeout: MAX_RETRY_WAIT_MS,
              retryAfter: true,
              methods: ALL_METHODS,
              statusCodes: RETRY_STATUS_CODES,
              errorCodes: RETRY_ERROR_CODES,
            },
          }
        : {}),
    };
    return readResponse(retrying ? this.#retrying : this.#agent, options, signal);
  }
}

/** The first value of a header that may repeat. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The `error.type` of a request that failed: canceled, timeout, or the error's code or name. */
function errorType(error: unknown, aborted: boolean, timedOut: boolean): string {
  if (aborted) return 'canceled';
  if (timedOut) return 'timeout';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error';
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = messageOf(error);
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}
