// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Primordials } from './primordials.ts';
import type { WebApis } from './web-apis.ts';

/** The request the sandbox sends to the host for `fetch` (see `egress.ts`). */
export interface FetchRequestData {
  url: string;
  method: string;
  headers: [string, string][];
  body?: string | Uint8Array;
}

/** The response the host sends back; `body` holds at most `maxFetchResponseBytes`. */
export interface FetchResponseData {
  status: number;
  statusText: string;
  url: string;
  redirected: boolean;
  headers: [string, string][];
  body: Uint8Array;
}

/**
 * Defines `fetch(url, init)` on the sandbox's global object: a subset of the Fetch standard whose
 * requests run on the host (undici, behind the egress policy). Supports method, headers and a body
 * (string, `URLSearchParams`, bytes, or a plain object/array sent as JSON); the `Response` has
 * status, statusText, ok, url, redirected, headers, text(), json(), arrayBuffer() and bytes().
 */
export function installFetch(
  P: Primordials,
  web: WebApis,
  request: (data: FetchRequestData) => Promise<FetchResponseData>,
  define: (name: string, value: unknown) => void,
): void {
  const { URL, URLSearchParams, Headers, decodeUtf8 } = web;

  class Response {
    #data: FetchResponseData;
    #headers: InstanceType<typeof Headers>;
    #used = false;
    constructor(data: FetchResponseData) {
      this.#data = data;
      this.#headers = new Headers(data.headers);
    }
    get status() {
      return this.#data.status;
    }
    get statusText() {
      return this.#data.statusText;
    }
    get ok() {
      return this.#data.status >= 200 && this.#data.status < 300;
    }
    get url() {
      return this.#data.url;
    }
    get redirected() {
      return this.#data.redirected;
    }
    get type() {
      return 'basic';
    }
    get headers() {
      return this.#headers;
    }
    get bodyUsed() {
      return this.#used;
    }
    #consume() {
      if (this.#used)
        return P.Promise.reject(new P.TypeError('Body is unusable: Body has already been read'));
      this.#used = true;
      return P.promiseResolve(this.#data.body);
    }
    async bytes() {
      return new P.Uint8Array(await this.#consume());
    }
    async arrayBuffer() {
      return (await this.bytes()).buffer;
    }
    async text() {
      return decodeUtf8(await this.#consume());
    }
    async json() {
      return P.jsonParse(await this.text());
    }
  }

  async function fetch(input: unknown, init: Record<string, unknown> = {}) {
    const raw =
      input instanceof URL
        ? input.href
        : typeof input === 'object' && input !== null && 'url' in input
          ? input.url
          : input;
    let url: string;
    try {
      url = new URL(P.String(raw)).href;
    } catch {
      throw new P.TypeError(
        `fetch: invalid URL ${P.jsonStringify(P.String(raw))} (an absolute http: or https: URL is needed)`,
      );
    }
    const method = P.stringToUpperCase(P.String(init.method ?? 'GET'));
    const headers = new Headers(init.headers as never);
    let body: string | Uint8Array | undefined;
    const b = init.body;
    if (b === undefined || b === null) body = undefined;
    else if (typeof b === 'string') body = b;
    else if (b instanceof URLSearchParams) {
      body = b.toString();
      if (!headers.has('content-type'))
        headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    } else if (P.isView(b)) {
      const v = b as ArrayBufferView;
      body = new P.Uint8Array(new P.Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    } else if (b instanceof P.ArrayBuffer) body = new P.Uint8Array(new P.Uint8Array(b));
    else if (typeof b === 'object') {
      body = P.jsonStringify(b);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    } else {
      throw new P.TypeError(
        'fetch: body must be a string, URLSearchParams, bytes, or a plain object (sent as JSON)',
      );
    }
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
      throw new P.TypeError('fetch: a GET or HEAD request cannot have a body');
    }
    const data = await request({ url, method, headers: [...headers.entries()], body });
    return new Response(data);
  }

  define('fetch', fetch);
}
