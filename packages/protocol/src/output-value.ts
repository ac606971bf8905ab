/**
 * A JSON value: what {@link encodeOutputValue} returns and every interface carries.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * The typed-array and buffer kinds of the encoding (`{"$type": "Uint8Array", "base64": "..."}`).
 */
const BINARY_TYPES = [
  'ArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;

type BinaryType = (typeof BINARY_TYPES)[number];

/**
 * Encodes an output value (anything `output()` accepts: structured-clone data) as JSON that carries
 * it exactly. JSON values stay as they are, so `output({a: 1})` is `{"a": 1}` on every interface;
 * the rest becomes a tagged object:
 *
 * | value | JSON |
 * | --- | --- |
 * | `undefined` | `{"$type": "undefined"}` |
 * | `NaN`, `Infinity`, `-Infinity`, `-0` | `{"$type": "number", "value": "NaN"}` (the name as text) |
 * | `10n` | `{"$type": "bigint", "value": "10"}` |
 * | `new Date(0)` | `{"$type": "Date", "value": "1970-01-01T00:00:00.000Z"}` (`null` for an invalid date) |
 * | `/a+/g` | `{"$type": "RegExp", "source": "a+", "flags": "g"}` |
 * | `new Map([[k, v]])` | `{"$type": "Map", "entries": [[k, v]]}` |
 * | `new Set([x])` | `{"$type": "Set", "values": [x]}` |
 * | `new Error("boom")` | `{"$type": "Error", "name": "Error", "message": "boom", "stack": "..."}` |
 * | `Uint8Array`, other typed arrays, `DataView`, `ArrayBuffer` | `{"$type": "Uint8Array", "base64": "AQID"}` (the bytes) |
 * | an object reached again (a cycle or a shared reference) | `{"$ref": "#/path"}` (a JSON Pointer to its first place) |
 * | a plain object with its own `$type` or `$ref` key | `{"$type": "Object", "value": {...}}` |
 *
 * A JSON Pointer (RFC 6901) in `$ref` points into the encoded JSON, `#` being the whole value.
 * Array holes read as `undefined`. Never throws: a kind that cannot come out of the sandbox (a
 * function, a symbol) becomes `{"$type": "unsupported", "kind": "function", "value": "<text>"}`.
 * {@link decodeOutputValue} reverses it.
 * @see docs/protocol.md#output-values
 */
export function encodeOutputValue(value: unknown): JsonValue {
  // Where each object was first met, as a chain of keys: a pointer string is built only for a `$ref`.
  const seen = new Map<object, Place>();
  const walk = (v: unknown, place: Place): JsonValue => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        if (Number.isFinite(v) && !Object.is(v, -0)) return v;
        return { $type: 'number', value: Object.is(v, -0) ? '-0' : String(v) };
      case 'bigint':
        return { $type: 'bigint', value: v.toString() };
      case 'undefined':
        return { $type: 'undefined' };
      case 'symbol':
      case 'function':
        return { $type: 'unsupported', kind: typeof v, value: String(v) };
    }
    if (v === null) return null;
    const o = v as object;
    const first = seen.get(o);
    if (first !== undefined) return { $ref: pointerOf(first) };
    seen.set(o, place);
    if (Array.isArray(o)) {
      const out: JsonValue[] = [];
      for (let i = 0; i < o.length; i++) out.push(walk(o[i], { parent: place, key: i }));
      return out;
    }
    if (Object.getPrototypeOf(o) === Object.prototype)
      return encodeObject(o as Record<string, unknown>, place);
    if (o instanceof Date) {
      const time = o.getTime();
      return { $type: 'Date', value: Number.isNaN(time) ? null : o.toISOString() };
    }
    if (o instanceof RegExp) return { $type: 'RegExp', source: o.source, flags: o.flags };
    if (o instanceof Map) {
      const entries: JsonValue[] = [];
      const at: Place = { parent: place, key: 'entries' };
      for (const [key, item] of o) {
        const entry: Place = { parent: at, key: entries.length };
        entries.push([walk(key, { parent: entry, key: 0 }), walk(item, { parent: entry, key: 1 })]);
      }
      return { $type: 'Map', entries };
    }
    if (o instanceof Set) {
      const values: JsonValue[] = [];
      const at: Place = { parent: place, key: 'values' };
      for (const item of o) values.push(walk(item, { parent: at, key: values.length }));
      return { $type: 'Set', values };
    }
    if (o instanceof Error) {
      const out: { [key: string]: JsonValue } = {
        $type: 'Error',
        name: String(o.name),
        message: String(o.message),
      };
      if (typeof o.stack === 'string') out.stack = o.stack;
      return out;
    }
    if (o instanceof ArrayBuffer) return { $type: 'ArrayBuffer', base64: toBase64(new Uint8Array(o)) };
    if (ArrayBuffer.isView(o)) {
      const bytes = new Uint8Array(o.buffer, o.byteOffset, o.byteLength);
      return { $type: binaryName(o), base64: toBase64(bytes) };
    }
    return encodeObject(o as Record<string, unknown>, place);
  };
  const encodeObject = (record: Record<string, unknown>, place: Place): JsonValue => {
    const tagged = Object.hasOwn(record, '$type') || Object.hasOwn(record, '$ref');
    const base: Place = tagged ? { parent: place, key: 'value' } : place;
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(record)) setOwn(out, key, walk(record[key], { parent: base, key }));
    return tagged ? { $type: 'Object', value: out } : out;
  };
  return walk(value, ROOT);
}

/** Where a value sits in the encoded JSON: the key under its parent (`ROOT` is the whole value). */
interface Place {
  parent: Place | undefined;
  key: string | number;
}

const ROOT: Place = { parent: undefined, key: '' };

/** The JSON Pointer of a place (RFC 6901: `~` -> `~0`, `/` -> `~1`), `#` for the whole value. */
function pointerOf(place: Place): string {
  const keys: string[] = [];
  for (let at: Place = place; at.parent !== undefined; at = at.parent)
    keys.push(String(at.key).replaceAll('~', '~0').replaceAll('/', '~1'));
  return `#${keys
    .reverse()
    .map((key) => `/${key}`)
    .join('')}`;
}

/** Sets an own key (a `__proto__` key stays an own key instead of changing the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * Restores the value {@link encodeOutputValue} encoded (a Map is a Map again, `{"$ref"}` the same
 * object). Unknown `$type` tags and references that point nowhere are left as they are.
 */
export function decodeOutputValue(json: unknown): unknown {
  // Each encoded object -> its decoded value; a `$ref` is resolved by following its pointer through
  // the encoded JSON (the object it names was met before, in the same order as when encoding).
  const decoded = new Map<object, unknown>();
  const resolve = (pointer: string): unknown => {
    if (pointer !== '#' && !pointer.startsWith('#/')) return NOT_FOUND;
    let at: unknown = json;
    if (pointer !== '#') {
      for (const raw of pointer.slice(2).split('/')) {
        const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
        if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return NOT_FOUND;
        at = (at as Record<string, unknown>)[key];
      }
    }
    return typeof at === 'object' && at !== null && decoded.has(at) ? decoded.get(at) : NOT_FOUND;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      decoded.set(v, out);
      for (let i = 0; i < v.length; i++) out.push(walk(v[i]));
      return out;
    }
    const record = v as Record<string, unknown>;
    if (typeof record.$ref === 'string' && Object.keys(record).length === 1) {
      const target = resolve(record.$ref);
      return target === NOT_FOUND ? record : target;
    }
    if (typeof record.$type === 'string') {
      const out = decodeTagged(record, decoded, walk);
      if (out !== NOT_FOUND) return out;
    }
    return decodePlain(record, record, decoded, walk);
  };
  return walk(json);
}

const NOT_FOUND = Symbol('not found');

/** A plain object decoded from `record`, registered under `encoded` (the object or its wrapper). */
function decodePlain(
  record: Record<string, unknown>,
  encoded: object,
  decoded: Map<object, unknown>,
  walk: (value: unknown) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  decoded.set(encoded, out);
  for (const key of Object.keys(record)) setOwn(out, key, walk(record[key]));
  return out;
}

function decodeTagged(
  record: Record<string, unknown>,
  decoded: Map<object, unknown>,
  walk: (value: unknown) => unknown,
): unknown {
  const register = <T>(value: T): T => {
    decoded.set(record, value);
    return value;
  };
  switch (record.$type) {
    case 'undefined':
      return undefined;
    case 'number':
      return record.value === '-0' ? -0 : Number(record.value);
    case 'bigint':
      return typeof record.value === 'string' ? BigInt(record.value) : NOT_FOUND;
    case 'Date':
      return register(new Date(typeof record.value === 'string' ? record.value : Number.NaN));
    case 'RegExp':
      return register(new RegExp(String(record.source), String(record.flags ?? '')));
    case 'Map': {
      if (!Array.isArray(record.entries)) return NOT_FOUND;
      const out = register(new Map<unknown, unknown>());
      for (const entry of record.entries as unknown[]) {
        if (!Array.isArray(entry)) continue;
        out.set(walk(entry[0]), walk(entry[1]));
      }
      return out;
    }
    case 'Set': {
      if (!Array.isArray(record.values)) return NOT_FOUND;
      const out = register(new Set<unknown>());
      for (const item of record.values as unknown[]) out.add(walk(item));
      return out;
    }
    case 'Error': {
      const out = register(new Error(String(record.message ?? '')));
      Object.defineProperty(out, 'name', {
        value: String(record.name ?? 'Error'),
        writable: true,
        configurable: true,
      });
      if (typeof record.stack === 'string')
        Object.defineProperty(out, 'stack', { value: record.stack, writable: true, configurable: true });
      return out;
    }
    case 'Object':
      if (typeof record.value !== 'object' || record.value === null || Array.isArray(record.value))
        return NOT_FOUND;
      return decodePlain(record.value as Record<string, unknown>, record, decoded, walk);
  }
  if (
    typeof record.base64 === 'string' &&
    (BINARY_TYPES as readonly string[]).includes(record.$type as string)
  )
    return register(fromBinary(record.$type as BinaryType, record.base64));
  return NOT_FOUND;
}

function binaryName(view: ArrayBufferView): BinaryType {
  if (view instanceof DataView) return 'DataView';
  const name = Object.prototype.toString.call(view).slice(8, -1);
  return (BINARY_TYPES as readonly string[]).includes(name) ? (name as BinaryType) : 'Uint8Array';
}

function fromBinary(type: BinaryType, base64: string): unknown {
  const bytes = fromBase64(base64);
  const buffer = bytes.buffer as ArrayBuffer;
  if (type === 'ArrayBuffer') return buffer;
  if (type === 'DataView') return new DataView(buffer);
  const Ctor = (globalThis as unknown as Record<string, new (b: ArrayBuffer) => unknown>)[type];
  return Ctor ? new Ctor(buffer) : new Uint8Array(buffer);
}

// btoa/atob: in browsers and Node alike (Uint8Array.prototype.toBase64 is not in Node 24 yet).
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
