// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Primordials } from './primordials.ts';
import type { HostCall } from './web-apis.ts';

/** The URL classes, as `installWebApis` and `fetch` receive them. */
export interface UrlApis {
  URL: new (url: string, base?: string) => { href: string };
  URLSearchParams: new (init?: unknown) => { toString(): string };
}

/**
 * The parts a sandbox `URL` exposes as accessors (all settable but `origin`). The worker's `url.parse`
 * and `url.set` return exactly these; `bootstrapSource` writes the list into the isolate's source.
 */
export const URL_PARTS = [
  'href',
  'origin',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
] as const;

/**
 * Builds WHATWG `URL` and `URLSearchParams` for the sandbox (`parts` is {@link URL_PARTS}). Parsing,
 * serialization and percent-encoding are Node's own (ada), done in the worker through `call`; the
 * classes keep the parsed parts and pairs.
 */
export function createUrlApis(P: Primordials, call: HostCall, parts: readonly string[]): UrlApis {
  type Parts = Record<string, string>;

  // Lets a URL own its searchParams; assigned in URLSearchParams' static block (private access).
  let linkParams: (params: URLSearchParams, search: string, onChange: () => void) => void = () => {};

  class URLSearchParams {
    #pairs: [string, string][] = [];
    #onChange: (() => void) | undefined;
    constructor(init: unknown = '') {
      if (typeof init === 'object' && init !== null) {
        if (init instanceof URLSearchParams) {
          this.#pairs = P.arraySlice(init.#pairs) as [string, string][];
        } else if (typeof (init as Iterable<unknown>)[Symbol.iterator] === 'function') {
          for (const pair of init as Iterable<unknown>) {
            const [k, v, ...rest] = pair as unknown[];
            if (rest.length > 0 || v === undefined)
              throw new P.TypeError('URLSearchParams: each pair must have exactly two items');
            P.arrayPush(this.#pairs, [P.String(k), P.String(v)]);
          }
        } else {
          const keys = P.objectKeys(init);
          for (let i = 0; i < keys.length; i++) {
            P.arrayPush(this.#pairs, [keys[i]!, P.String((init as Record<string, unknown>)[keys[i]!])]);
          }
        }
      } else {
        this.#pairs = call('qs.parse', P.String(init)) as [string, string][];
      }
    }
    static {
      linkParams = (params, search, onChange) => {
        params.#pairs = call('qs.parse', search) as [string, string][];
        params.#onChange = onChange;
      };
    }
    #changed() {
      this.#onChange?.();
    }
    get size() {
      return this.#pairs.length;
    }
    append(name: unknown, value: unknown) {
      P.arrayPush(this.#pairs, [P.String(name), P.String(value)]);
      this.#changed();
    }
    delete(name: unknown, value?: unknown) {
      const n = P.String(name);
      const v = value === undefined ? undefined : P.String(value);
      this.#pairs = this.#pairs.filter(([k, x]) => !(k === n && (v === undefined || x === v)));
      this.#changed();
    }
    get(name: unknown) {
      const n = P.String(name);
      for (const [k, v] of this.#pairs) if (k === n) return v;
      return null;
    }
    getAll(name: unknown) {
      const n = P.String(name);
      return this.#pairs.filter(([k]) => k === n).map(([, v]) => v);
    }
    has(name: unknown, value?: unknown) {
      const n = P.String(name);
      const v = value === undefined ? undefined : P.String(value);
      return this.#pairs.some(([k, x]) => k === n && (v === undefined || x === v));
    }
    set(name: unknown, value: unknown) {
      const n = P.String(name);
      const i = this.#pairs.findIndex(([k]) => k === n);
      if (i === -1) P.arrayPush(this.#pairs, [n, P.String(value)]);
      else {
        this.#pairs[i] = [n, P.String(value)];
        this.#pairs = this.#pairs.filter(([k], j) => j <= i || k !== n);
      }
      this.#changed();
    }
    sort() {
      // Stable sort by UTF-16 code units, as the URL standard says.
      P.arraySort(this.#pairs, (a: [string, string], b: [string, string]) =>
        a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0,
      );
      this.#changed();
    }
    forEach(fn: (value: string, key: string, parent: URLSearchParams) => void, thisArg?: unknown) {
      for (const [k, v] of P.arraySlice(this.#pairs) as [string, string][])
        P.apply(fn, thisArg, [v, k, this]);
    }
    *entries(): IterableIterator<[string, string]> {
      for (const [k, v] of P.arraySlice(this.#pairs) as [string, string][]) yield [k, v];
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return call('qs.stringify', this.#pairs) as string;
    }
  }

  class URL {
    #parts: Parts;
    #params: URLSearchParams | undefined;
    constructor(url: unknown, base?: unknown) {
      const parts = call(
        'url.parse',
        P.String(url),
        base === undefined ? undefined : P.String(base),
      ) as Parts | null;
      if (parts === null) throw new P.TypeError(`Invalid URL: ${P.String(url)}`);
      this.#parts = parts;
    }
    static canParse(url: unknown, base?: unknown) {
      return call('url.parse', P.String(url), base === undefined ? undefined : P.String(base)) !== null;
    }
    static parse(url: unknown, base?: unknown) {
      try {
        return new URL(url, base);
      } catch {
        return null;
      }
    }
    #set(key: string, value: unknown) {
      this.#parts = call('url.set', this.#parts.href, key, P.String(value)) as Parts;
      if (key !== 'search' && key !== 'href') return;
      if (this.#params) linkParams(this.#params, this.#parts.search!, () => this.#syncSearch());
    }
    #syncSearch() {
      const query = this.#params!.toString();
      this.#parts = call('url.set', this.#parts.href, 'search', query) as Parts;
    }
    get searchParams() {
      if (!this.#params) {
        this.#params = new URLSearchParams();
        linkParams(this.#params, this.#parts.search!, () => this.#syncSearch());
      }
      return this.#params;
    }
    toString() {
      return this.#parts.href!;
    }
    toJSON() {
      return this.#parts.href!;
    }
    static {
      for (const key of parts) {
        P.defineProperty(URL.prototype, key, {
          get(this: URL) {
            return this.#parts[key];
          },
          set:
            key === 'origin'
              ? undefined
              : function (this: URL, value: unknown) {
                  this.#set(key, value);
                },
          enumerable: true,
          configurable: true,
        });
      }
    }
  }

  return { URL, URLSearchParams } as unknown as UrlApis;
}
