// Shapes of the requests a program's isolate sends the worker. Everything from the isolate is
// untrusted: these checks run before any of it is used.
import type { FetchRequestData } from '../bootstrap/fetch.ts';

/** A call id from the isolate: a positive safe integer. */
export const isCallId = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

/**
 * The fetch request the isolate sent, checked and copied field by field, or undefined when it is
 * malformed: `url` and `method` strings, `headers` an array of `[name, value]` string pairs, `body`
 * absent, a string or a `Uint8Array`.
 */
export function toFetchRequest(request: unknown): FetchRequestData | undefined {
  const r = request as { url?: unknown; method?: unknown; headers?: unknown; body?: unknown };
  const valid =
    typeof r === 'object' &&
    r !== null &&
    typeof r.url === 'string' &&
    typeof r.method === 'string' &&
    Array.isArray(r.headers) &&
    r.headers.every(
      (h) => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string',
    ) &&
    (r.body === undefined || typeof r.body === 'string' || r.body instanceof Uint8Array);
  if (!valid) return undefined;
  return {
    url: r.url as string,
    method: r.method as string,
    headers: r.headers as [string, string][],
    body: r.body as string | Uint8Array | undefined,
  };
}
