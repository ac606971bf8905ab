// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Primordials } from './primordials.ts';

/** Turns `console.log` arguments into copyable data; see {@link createInspectCopier}. */
export type InspectCopy = (value: unknown) => unknown;

/**
 * Returns `inspectCopy(value)`: a copyable picture of any value for `console.*`, which the worker
 * renders with Node's `util.format` rules. What structured clone cannot carry becomes a marker object
 * `{ __mci_inspect__: kind, ... }` (functions, symbols, errors, accessors, class instances, promises),
 * so `console.log(fn)` prints `[Function: fn]` as Node does. Getters are not invoked (Node shows
 * `[Getter]`); the picture stops at depth 6 and at 1000 entries per object.
 */
export function createInspectCopier(P: Primordials): InspectCopy {
  const MARK = '__mci_inspect__';
  const MAX_DEPTH = 6;
  const MAX_ENTRIES = 1000;
  /** What `inspectSlotted` returns for an object that is none of the slotted built-ins. */
  const NOT_SLOTTED = {};
  const marker = (kind: string, fields: Record<string, unknown>) => {
    const m: Record<string, unknown> = { [MARK]: kind };
    const keys = P.objectKeys(fields);
    for (let i = 0; i < keys.length; i++) m[keys[i]!] = fields[keys[i]!];
    return m;
  };
  const brand = P.hasBrand;
  const safe = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch {
      return fallback;
    }
  };
  const constructorName = (o: object): string | null =>
    safe(() => {
      const proto = P.getPrototypeOf(o);
      if (proto === null) return null;
      const d = P.getOwnPropertyDescriptor(proto, 'constructor');
      const ctor = d && 'value' in d ? d.value : undefined;
      const name = typeof ctor === 'function' ? (ctor as { name?: unknown }).name : undefined;
      return typeof name === 'string' && name !== '' ? name : 'Object';
    }, 'Object');
  const functionKind = (fn: unknown) => {
    const src = safe(() => P.functionToString(fn), '');
    if (P.regExpTest(/^class\b/, src)) return 'class';
    if (P.regExpTest(/^async\s*(function\s*)?\*/, src)) return 'AsyncGeneratorFunction';
    if (P.regExpTest(/^async\b/, src)) return 'AsyncFunction';
    if (P.regExpTest(/^function\s*\*/, src)) return 'GeneratorFunction';
    return 'Function';
  };

  return function inspectCopy(value: unknown): unknown {
    const seen = new P.Map<object, unknown>();
    const mapCopy = (v: object, depth: number) => {
      const out = new P.Map();
      P.mapSet(seen, v, out);
      let n = 0;
      P.mapForEach(v, (val: unknown, key: unknown) => {
        if (n++ < MAX_ENTRIES) P.mapSet(out, walk(key, depth + 1), walk(val, depth + 1));
      });
      return out;
    };
    const setCopy = (v: object, depth: number) => {
      const out = new P.Set();
      P.mapSet(seen, v, out);
      let n = 0;
      P.setForEach(v, (val: unknown) => {
        if (n++ < MAX_ENTRIES) P.setAdd(out, walk(val, depth + 1));
      });
      return out;
    };
    // `kind` (see `slottedKind`) names what the prototype chain says `v` is: a real Date, Map or Set
    // passes that check first, with none of the thrown checks before it in the general order below.
    const inspectSlotted = (v: object, depth: number, kind: number): unknown => {
      if (kind === 1 && brand(P.dateGetTime, v)) return v;
      if (kind === 3 && brand(P.mapSize, v)) return mapCopy(v, depth);
      if (kind === 4 && brand(P.setSize, v)) return setCopy(v, depth);
      if (brand(P.arrayBufferByteLength, v) || brand(P.dateGetTime, v)) return v;
      if (brand(P.regExpSource, v) && v !== P.RegExp.prototype) return v;
      if (P.isError ? P.isError(v) : v instanceof P.Error) {
        const e = v as Error;
        return marker('error', {
          name: safe(() => P.String(e.name), 'Error'),
          message: safe(() => P.String(e.message), ''),
          stack: safe(() => (typeof e.stack === 'string' ? e.stack : undefined), undefined),
        });
      }
      if (v instanceof P.Promise) return marker('promise', {});
      if (brand((x) => P.weakMapHas(x, P.ObjectPrototype), v)) return marker('weak', { name: 'WeakMap' });
      if (brand((x) => P.weakSetHas(x, P.ObjectPrototype), v)) return marker('weak', { name: 'WeakSet' });
      if (brand(P.mapSize, v)) return mapCopy(v, depth);
      if (brand(P.setSize, v)) return setCopy(v, depth);
      return NOT_SLOTTED;
    };
    const walk = (v: unknown, depth: number): unknown => {
      if (typeof v === 'symbol')
        return marker('symbol', { description: safe(() => v.description, undefined) });
      if (typeof v === 'function') {
        const name = safe(() => (v as { name?: unknown }).name, '');
        return marker('function', { name: typeof name === 'string' ? name : '', kind: functionKind(v) });
      }
      if (typeof v !== 'object' || v === null) return v;
      if (P.mapHas(seen, v)) return P.mapGet(seen, v);
      const isArray = P.isArray(v);
      if (depth > MAX_DEPTH) return marker('depth', { name: isArray ? 'Array' : constructorName(v) });
      if (P.isView(v)) return v;
      // Brand checks throw for other objects, which is slow: only objects inheriting from a slotted
      // built-in's prototype need them.
      // A chain whose walk throws (a Proxy) gets a kind with no fast path: the checks decide.
      const kind = isArray ? -1 : safe(() => P.slottedKind(v), 0);
      if (kind !== -1) {
        const slotted = inspectSlotted(v, depth, kind);
        if (slotted !== NOT_SLOTTED) return slotted;
      }
      const out: Record<string, unknown> | unknown[] = isArray ? [] : {};
      const name = isArray ? 'Array' : constructorName(v);
      const result = name === 'Object' || name === 'Array' ? out : marker('instance', { name, value: out });
      P.mapSet(seen, v, result);
      const keys = P.objectKeys(v);
      const count = P.mathMin(keys.length, MAX_ENTRIES);
      for (let i = 0; i < count; i++) {
        const key = keys[i]!;
        const d = safe(() => P.getOwnPropertyDescriptor(v, key), undefined);
        if (d === undefined) continue;
        const item =
          'value' in d
            ? walk(d.value, depth + 1)
            : marker('accessor', { get: d.get !== undefined, set: d.set !== undefined });
        P.defineProperty(out, key, { value: item, writable: true, enumerable: true, configurable: true });
      }
      return result;
    };
    return walk(value, 0);
  };
}
