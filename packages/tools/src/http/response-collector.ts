import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Abortable } from '../abort.ts';

/** A response read whole. */
export interface CollectedResponse {
  statusCode: number;
  statusText: string;
  /** Lower-cased names, as undici parses them. */
  headers: IncomingHttpHeaders;
  /** The body, or undefined when it was larger than the limit (the request was ended unread). */
  body: Buffer | undefined;
}

/** Ends a request whose body passed the limit; reported as a response without a body. */
class BodyTooLarge extends Error {}

/**
 * Sends one request with undici's dispatch-handler API and reads the whole response into memory,
 * up to `maxBytes`: a body declared or found larger ends the request, and the response comes back
 * with `body` undefined. The stream API (`Dispatcher.request`) wraps every response body in a
 * Readable, which costs more than the rest of a small request; a tool keeps the body whole anyway.
 *
 * `owner.track` is given the running request (its `abort(reason)` ends it as an AbortSignal would:
 * before it starts, while waiting for the response, or mid-body) and `undefined` once it is over.
 * Rejects with undici's error for a failed or aborted request.
 *
 * @see https://github.com/nodejs/undici/blob/main/docs/docs/api/Dispatcher.md#dispatcherdispatchoptions-handler
 */
export function collectResponse(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  maxBytes: number,
  owner: RequestOwner,
): Promise<CollectedResponse> {
  return new Promise((resolve, reject) => {
    const collector = new ResponseCollector(maxBytes, (error, response) => {
      owner.track(undefined);
      if (error) reject(error);
      else resolve(response!);
    });
    owner.track(collector);
    try {
      dispatcher.dispatch(options, collector);
    } catch (error) {
      owner.track(undefined);
      reject(error);
    }
  });
}

/** What may end a request while it runs (a deadline). */
export interface RequestOwner {
  /** Called with the running request, then with `undefined` once it is over. */
  track(request: Abortable | undefined): void;
}

class ResponseCollector implements Dispatcher.DispatchHandler, Abortable {
  readonly #maxBytes: number;
  readonly #done: (error: Error | undefined, response?: CollectedResponse) => void;
  #controller: Dispatcher.DispatchController | undefined;
  /** An abort asked for before undici started the request. */
  #reason: Error | undefined;
  #response: CollectedResponse | undefined;
  #chunks: Buffer[] = [];
  #length = 0;
  #settled = false;

  constructor(maxBytes: number, done: (error: Error | undefined, response?: CollectedResponse) => void) {
    this.#maxBytes = maxBytes;
    this.#done = done;
  }

  abort(reason?: unknown): void {
    const error = reason instanceof Error ? reason : new Error('Request aborted');
    if (this.#controller) this.#controller.abort(error);
    else this.#reason ??= error;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#reason) controller.abort(this.#reason);
    else this.#controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusText?: string,
  ): void {
    // 1xx responses (100 Continue, 103 Early Hints) come before the real one.
    if (statusCode < 200) return;
    this.#response = { statusCode, statusText: statusText ?? '', headers, body: undefined };
    const declared = Number(headerValue(headers['content-length']) ?? 0);
    if (declared > this.#maxBytes) controller.abort(new BodyTooLarge());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#length += chunk.length;
    if (this.#length > this.#maxBytes) controller.abort(new BodyTooLarge());
    else this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    const response = this.#response;
    if (!response) {
      this.#settle(new Error('The response ended before its headers'));
      return;
    }
    const chunks = this.#chunks;
    response.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#length);
    this.#settle(undefined, response);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (error instanceof BodyTooLarge && this.#response) this.#settle(undefined, this.#response);
    else this.#settle(error);
  }

  #settle(error: Error | undefined, response?: CollectedResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#chunks = [];
    this.#done(error, response);
  }
}

/** The first value of a header that may repeat. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
