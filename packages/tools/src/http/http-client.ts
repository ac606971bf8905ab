import { Agent, type Dispatcher, interceptors } from 'undici';
import { raceAbort } from '../abort.ts';
import { messageOf } from '../tool-error.ts';
import { canceledResult, errorResult, type ToolResult } from '../tool-result.ts';
import {
  type HttpRequestSpec,
  type PreparedRequest,
  prepareRequest,
  requestHref,
  requestPath,
  setHeader,
  setQueryParam,
} from './http-request.ts';
import { OAuth2TokenCache } from './oauth2-token-cache.ts';
import { DeadlineTimer, RequestDeadline } from './request-deadline.ts';
import { bodyTypeOf, mapBody } from './response-content.ts';
import { collectResponse, headerValue } from './response-collector.ts';

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
 * Sends http tool requests with undici over one keep-alive connection pool: auth (api key, bearer,
 * basic, OAuth2 client credentials with a token cache and one refresh on 401), retries through
 * undici's retry interceptor (connection errors, 408, 429, 5xx; exponential backoff; `Retry-After`),
 * one timeout for the whole request, and the mapping of the response to a {@link ToolResult}.
 */
export class HttpClient {
  readonly #agent = new Agent();
  readonly #maxBodyBytes: number;
  readonly #retrying: Dispatcher = this.#agent.compose(interceptors.retry({ throwOnError: false }));
  readonly #tokens = new OAuth2TokenCache(this.#agent);
  readonly #deadlines = new DeadlineTimer();

  /** @param maxBodyBytes larger response bodies are an error (they are not held in memory). */
  constructor(maxBodyBytes: number) {
    this.#maxBodyBytes = maxBodyBytes;
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
    const limit = new RequestDeadline(signal, spec.timeoutMs, this.#deadlines, started);
    try {
      const token = spec.auth ? await this.#authorize(prepared, spec, limit) : undefined;
      let response = await this.#dispatch(prepared, spec, limit);
      if (response.statusCode === 401 && spec.auth?.type === 'oauth2' && token !== undefined) {
        // The token may have been revoked early: fetch a new one and try once more.
        this.#tokens.invalidate(spec.auth, token);
        await this.#authorize(prepared, spec, limit);
        response = await this.#dispatch(prepared, spec, limit);
      }
      const { body } = response;
      if (body === undefined) {
        return errorResult(
          `Response body of ${requestHref(prepared)} is larger than the ${this.#maxBodyBytes}-byte limit`,
          { status_code: response.statusCode },
        );
      }
      const metadata = {
        status_code: response.statusCode,
        response_time_ms: Math.round((performance.now() - started) * 100) / 100,
        headers: response.headers,
      };
      const mapped = mapBody(body, bodyTypeOf(headerValue(response.headers['content-type'])));
      if (response.statusCode >= 400) {
        const status = `HTTP ${response.statusCode}${response.statusText ? ` ${response.statusText}` : ''}`;
        const body = mapped.text.slice(0, ERROR_BODY_CHARS);
        return errorResult(body ? `${status}: ${body}` : status, metadata);
      }
      const result: ToolResult = { isError: false, content: mapped.content, metadata };
      if (mapped.structuredContent !== undefined) result.structuredContent = mapped.structuredContent;
      return result;
    } catch (error) {
      if (signal?.aborted) return canceledResult(signal.reason);
      if (limit.timedOut) {
        return errorResult(`Request to ${prepared.url.origin} timed out after ${spec.timeoutMs} ms`);
      }
      return errorResult(`Request to ${requestHref(prepared)} failed: ${describe(error)}`);
    } finally {
      limit.dispose();
    }
  }

  /** Closes the connection pool. */
  async close(): Promise<void> {
    this.#deadlines.close();
    await this.#agent.close();
  }

  /** Applies the auth block to the prepared request; returns the OAuth2 token used, if any. */
  async #authorize(prepared: PreparedRequest, spec: HttpRequestSpec, limit: RequestDeadline) {
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
        const token = await raceAbort(this.#tokens.token(auth, spec.timeoutMs), limit.signal);
        setHeader(prepared.headers, 'Authorization', `Bearer ${token}`);
        return token;
      }
    }
  }

  /** Sends the request and reads the response (its body up to the limit). */
  #dispatch(prepared: PreparedRequest, spec: HttpRequestSpec, limit: RequestDeadline) {
    limit.throwIfAborted();
    const retrying = spec.attempts > 1;
    const dispatcher = retrying ? this.#retrying : this.#agent;
    const options = {
      origin: prepared.url.origin,
      path: requestPath(prepared),
      method: spec.method.toUpperCase() as Dispatcher.HttpMethod,
      headers: prepared.headers,
      body: prepared.body,
      // Read by undici's retry interceptor for this request only.
      retryOptions: retrying
        ? {
            maxRetries: spec.attempts - 1,
            minTimeout: spec.backoffMs,
            timeoutFactor: 2,
            maxTimeout: MAX_RETRY_WAIT_MS,
            retryAfter: true,
            methods: ALL_METHODS,
            statusCodes: RETRY_STATUS_CODES,
            errorCodes: RETRY_ERROR_CODES,
          }
        : undefined,
    } as Dispatcher.DispatchOptions;
    return collectResponse(dispatcher, options, this.#maxBodyBytes, limit);
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = messageOf(error);
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}
