import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** A response read whole. */
export interface WholeResponse {
  statusCode: number;
  statusText: string;
  /** Lower-cased names, as undici parses them. */
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Sends one request through `dispatcher` and reads the whole response into memory, with undici's
 * dispatch-handler API: a tool keeps the body whole anyway, and `request()` would wrap every body in
 * a Readable first. `signal` ends the request at any point (before it starts, while waiting for the
 * response, or mid-body). Body limits are the dispatcher's (`maxResponseSize`).
 *
 * @throws undici's error for a failed request, or `signal.reason` once it aborts.
 * @see https://github.com/nodejs/undici/blob/main/docs/docs/api/Dispatcher.md#dispatcherdispatchoptions-handler
 */
export function readResponse(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal,
): Promise<WholeResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let head: Omit<WholeResponse, 'body'> | undefined;
    const chunks: Buffer[] = [];
    const abort = () => controller?.abort(signal.reason);
    const settle = (error: Error | undefined) => {
      signal.removeEventListener('abort', abort);
      if (error) reject(error);
      else if (!head) reject(new Error('The response ended before its headers'));
      else resolve({ ...head, body: Buffer.concat(chunks) });
    };
    signal.addEventListener('abort', abort, { once: true });
    dispatcher.dispatch(options, {
      onRequestStart(started) {
        controller = started;
        if (signal.aborted) started.abort(signal.reason);
      },
      onResponseStart(_controller, statusCode, headers, statusText) {
        // 1xx responses (100 Continue, 103 Early Hints) come before the real one.
        if (statusCode >= 200) head = { statusCode, statusText: statusText ?? '', headers };
      },
      onResponseData: (_controller, chunk) => void chunks.push(chunk),
      onResponseEnd: () => settle(undefined),
      onResponseError: (_controller, error) => settle(error),
    });
  });
}
