// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Primordials } from './primordials.ts';
import type { UrlApis } from './url.ts';

/** A synchronous call into the worker (`host-functions.ts`); returns copied plain data. */
export type HostCall = (op: string, ...args: unknown[]) => unknown;

/** The web classes the bootstrap hands on to `fetch`. */
export interface WebApis extends UrlApis {
  Headers: new (
    init?: unknown,
  ) => {
    entries(): IterableIterator<[string, string]>;
    has(name: string): boolean;
    set(name: string, value: string): void;
    get(name: string): string | null;
  };
  decodeUtf8: (bytes: Uint8Array) => string;
}

/**
 * Defines `URL` and `URLSearchParams` (built by `createUrlApis`), `TextEncoder`, `TextDecoder`,
 * `Headers` and `crypto` (`randomUUID`, `getRandomValues`) on the sandbox's global object. UTF-8 and
 * randomness are done by Node in the worker through `call`, so the behaviour is Node's own.
 */
export function installWebApis(
  P: Primordials,
  call: HostCall,
  define: (name: string, value: unknown) => void,
  url: UrlApis,
): WebApis {
  const encodeUtf8 = (s: string) => call('utf8.encode', s) as Uint8Array;
  const decodeUtf8 = (bytes: Uint8Array, fatal = false, ignoreBOM = false) => {
    const r = call('utf8.decode', bytes, fatal, ignoreBOM) as { ok: boolean; value: string };
    if (!r.ok) throw new P.TypeError('The encoded data was not valid for encoding utf-8');
    return r.value;
  };
  const toBytes = (input: unknown): Uint8Array => {
    if (input === undefined) return new P.Uint8Array(0);
    if (P.isView(input)) {
      const v = input as ArrayBufferView;
      return new P.Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    }
    try {
      return new P.Uint8Array(input as ArrayBuffer, 0, P.arrayBufferByteLength(input));
    } catch {
      throw new P.TypeError('The "input" argument must be an ArrayBuffer or ArrayBufferView');
    }
  };
  // How many trailing bytes form an incomplete UTF-8 sequence (kept for the next streamed chunk).
  const incompleteTail = (b: Uint8Array) => {
    for (let i = 1; i <= 3 && i <= b.length; i++) {
      const byte = b[b.length - i]!;
      if ((byte & 0xc0) === 0x80) continue;
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return need > i ? i : 0;
    }
    return 0;
  };

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input: unknown = '') {
      return encodeUtf8(P.String(input));
    }
  }

  class TextDecoder {
    #fatal: boolean;
    #ignoreBOM: boolean;
    #pending: Uint8Array = new P.Uint8Array(0);
    constructor(label: unknown = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
      const l = P.stringToLowerCase(P.stringTrim(P.String(label)));
      if (l !== 'utf-8' && l !== 'utf8' && l !== 'unicode-1-1-utf-8') {
        throw new P.RangeError(
          `The "${P.String(label)}" encoding is not supported (the sandbox decodes utf-8 only)`,
        );
      }
      this.#fatal = Boolean(options?.fatal);
      this.#ignoreBOM = Boolean(options?.ignoreBOM);
    }
    get encoding() {
      return 'utf-8';
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input?: unknown, options?: { stream?: boolean }) {
      let bytes = toBytes(input);
      if (this.#pending.length > 0) {
        const joined = new P.Uint8Array(this.#pending.length + bytes.length);
        joined.set(this.#pending);
        joined.set(bytes, this.#pending.length);
        bytes = joined;
      }
      if (options?.stream) {
        const tail = incompleteTail(bytes);
        this.#pending = bytes.slice(bytes.length - tail);
        bytes = bytes.subarray(0, bytes.length - tail);
      } else {
        this.#pending = new P.Uint8Array(0);
      }
      return decodeUtf8(bytes, this.#fatal, this.#ignoreBOM);
    }
  }

  const normalizeName = (name: unknown) => {
    const n = P.String(name);
    if (!P.regExpTest(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, n))
      throw new P.TypeError(`Invalid header name: "${n}"`);
    return P.stringToLowerCase(n);
  };
  const normalizeValue = (value: unknown) => {
    const v = P.stringTrim(P.String(value));
    if (P.regExpTest(/[\0\r\n]/, v)) throw new P.TypeError('Invalid header value');
    return v;
  };

  class Headers {
    #list: [string, string][] = [];
    constructor(init?: unknown) {
      if (init === undefined || init === null) return;
      if (init instanceof Headers) {
        this.#list = P.arraySlice(init.#list) as [string, string][];
      } else if (typeof (init as Iterable<unknown>)[Symbol.iterator] === 'function') {
        for (const pair of init as Iterable<unknown>) {
          const [k, v, ...rest] = pair as unknown[];
          if (rest.length > 0 || v === undefined)
            throw new P.TypeError('Headers: each pair must have exactly two items');
          this.append(k, v);
        }
      } else if (typeof init === 'object') {
        const keys = P.objectKeys(init);
        for (let i = 0; i < keys.length; i++)
          this.append(keys[i], (init as Record<string, unknown>)[keys[i]!]);
      } else {
        throw new P.TypeError('Headers: init must be an object, an array of pairs or a Headers');
      }
    }
    append(name: unknown, value: unknown) {
      P.arrayPush(this.#list, [normalizeName(name), normalizeValue(value)]);
    }
    set(name: unknown, value: unknown) {
      const n = normalizeName(name);
      this.#list = this.#list.filter(([k]) => k !== n);
      P.arrayPush(this.#list, [n, normalizeValue(value)]);
    }
    delete(name: unknown) {
      const n = normalizeName(name);
      this.#list = this.#list.filter(([k]) => k !== n);
    }
    get(name: unknown) {
      const n = normalizeName(name);
      const values = this.#list.filter(([k]) => k === n).map(([, v]) => v);
      return values.length === 0 ? null : P.arrayJoin(values, ', ');
    }
    getSetCookie() {
      return this.#list.filter(([k]) => k === 'set-cookie').map(([, v]) => v);
    }
    has(name: unknown) {
      const n = normalizeName(name);
      return this.#list.some(([k]) => k === n);
    }
    *entries(): IterableIterator<[string, string]> {
      const names = [...new P.Set(this.#list.map(([k]) => k))].sort();
      for (const n of names) {
        if (n === 'set-cookie') for (const v of this.getSetCookie()) yield [n, v];
        else yield [n, this.get(n)!];
      }
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    forEach(fn: (value: string, key: string, parent: Headers) => void, thisArg?: unknown) {
      for (const [k, v] of this.entries()) P.apply(fn, thisArg, [v, k, this]);
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }

  const crypto = {
    randomUUID: () => call('crypto.randomUUID') as string,
    getRandomValues<T extends ArrayBufferView>(array: T): T {
      const name = P.isView(array) ? P.typedArrayName(array) : undefined;
      if (
        name === undefined ||
        name === 'Float32Array' ||
        name === 'Float64Array' ||
        name === 'Float16Array'
      ) {
        throw new P.TypeError('crypto.getRandomValues: the argument must be an integer TypedArray');
      }
      if (array.byteLength > 65536)
        throw new P.RangeError('crypto.getRandomValues: at most 65536 bytes per call');
      const bytes = call('crypto.randomBytes', array.byteLength) as Uint8Array;
      new P.Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
      return array;
    },
  };

  define('URL', url.URL);
  define('URLSearchParams', url.URLSearchParams);
  define('TextEncoder', TextEncoder);
  define('TextDecoder', TextDecoder);
  define('Headers', Headers);
  define('crypto', crypto);
  return {
    ...url,
    Headers,
    decodeUtf8: (b: Uint8Array) => decodeUtf8(b),
  } as unknown as WebApis;
}
