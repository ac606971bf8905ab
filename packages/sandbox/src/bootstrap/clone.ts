// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Primordials } from './primordials.ts';

/** Copies a value by structured-clone rules; see {@link createCloner}. */
export type Clone = (value: unknown, what: string) => unknown;

/**
 * Returns `clone(value, what)`: a deep copy of `value` made of plain data only (primitives, plain
 * objects, arrays, Date, RegExp, Map, Set, ArrayBuffer and views, Error), following the structured
 * clone rules (own enumerable string keys, getters read, prototypes dropped, cycles kept). A part
 * that cannot be copied (function, symbol, promise, WeakMap...) throws a `TypeError` naming its path,
 * for example `output(): $.items[2].callback is a function and cannot be copied out of the sandbox`.
 *
 * Buffers are always copied into fresh, non-shared memory, whatever `Symbol.species` says.
 *
 * Objects are told apart by brand checks (internal slots), which run only for objects whose
 * prototype chain passes through a slotted built-in's prototype (see `inheritsSlotted`): plain
 * objects, arrays and class instances, the usual props and outputs, are copied without a thrown
 * check. Paths are built only for the error message.
 */
export function createCloner(P: Primordials): Clone {
  // The per-node ones as locals: `P` is a dictionary-mode object (see `capturePrimordials`).
  const { mapHas, mapGet, mapSet, isArray, isView, inheritsSlotted, objectKeys, defineProperty } = P;
  const identifier = /^[A-Za-z_$][\w$]*$/;
  const child = (path: string, key: string) =>
    P.regExpTest(identifier, key) ? `${path}.${key}` : `${path}[${P.jsonStringify(key)}]`;
  const brand = (check: (v: unknown) => unknown, v: unknown) => {
    try {
      check(v);
      return true;
    } catch {
      return false;
    }
  };
  const copyBytes = (buffer: ArrayBuffer, offset: number, length: number) =>
    new P.Uint8Array(new P.Uint8Array(buffer, offset, length));
  /** What `copySlotted` returns for an object that is none of the slotted built-ins. */
  const NOT_SLOTTED = {};

  return function clone(value: unknown, what: string): unknown {
    const seen = new P.Map<object, unknown>();
    // The path to the value being copied, as segments (`path[d]` leads from depth d to d + 1); only
    // a failure turns it into text, so the common case builds no strings. An array index is a
    // number, an object key a string, a Map or Set position a label such as `<key 0>` in an array.
    // (No helper frame per level: the error's stack must still reach the program's own line.)
    // No prototype: a program's index setters on Array.prototype must not see these writes.
    const path = P.setPrototypeOf([], null) as Array<number | string | [string]>;
    const fail = (kind: string, depth: number): never => {
      let text = '$';
      for (let i = 0; i < depth; i++) {
        const segment = path[i]!;
        text =
          typeof segment === 'number'
            ? `${text}[${segment}]`
            : typeof segment === 'string'
              ? child(text, segment)
              : `${text}${segment[0]}`;
      }
      throw new P.TypeError(`${what}: ${text} is ${kind} and cannot be copied out of the sandbox`);
    };
    const walk = (v: unknown, depth: number): unknown => {
      switch (typeof v) {
        case 'string':
        case 'number':
        case 'boolean':
        case 'undefined':
        case 'bigint':
          return v;
        case 'symbol':
          return fail('a symbol', depth);
        case 'function':
          return fail('a function', depth);
      }
      if (v === null) return null;
      const o = v as object;
      if (mapHas(seen, o)) return mapGet(seen, o);
      if (isArray(o)) {
        const out: unknown[] = [];
        mapSet(seen, o, out);
        const length = (o as unknown[]).length;
        for (let i = 0; i < length; i++) {
          path[depth] = i;
          out[i] = walk((o as unknown[])[i], depth + 1);
        }
        return out;
      }
      if (isView(o)) {
        const name = P.typedArrayName(o);
        let out: unknown;
        if (name === undefined) {
          const bytes = copyBytes(P.dataViewBuffer(o), P.dataViewByteOffset(o), P.dataViewByteLength(o));
          out = new P.DataView(bytes.buffer);
        } else {
          const bytes = copyBytes(
            P.typedArrayBuffer(o),
            P.typedArrayByteOffset(o),
            P.typedArrayByteLength(o),
          );
          const Ctor = (P.globalThis as unknown as Record<string, new (b: ArrayBuffer) => unknown>)[name]!;
          out = new Ctor(bytes.buffer);
        }
        mapSet(seen, o, out);
        return out;
      }
      if (inheritsSlotted(o)) {
        const out = copySlotted(o, depth);
        if (out !== NOT_SLOTTED) return out;
      }
      const out: Record<string, unknown> = {};
      mapSet(seen, o, out);
      const keys = objectKeys(o);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        path[depth] = key;
        defineProperty(out, key, {
          value: walk((o as Record<string, unknown>)[key], depth + 1),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return out;
    };
    // Built-ins with internal slots, told apart by brand checks (a check throws for other objects).
    const copySlotted = (o: object, depth: number): unknown => {
      if (brand(P.arrayBufferByteLength, o)) {
        const out = copyBytes(o as ArrayBuffer, 0, P.arrayBufferByteLength(o)).buffer;
        mapSet(seen, o, out);
        return out;
      }
      if (brand(P.dateGetTime, o)) {
        const out = new P.Date(P.dateGetTime(o));
        mapSet(seen, o, out);
        return out;
      }
      if (brand(P.regExpSource, o) && o !== P.RegExp.prototype) {
        const out = new P.RegExp(P.regExpSource(o), P.regExpFlags(o));
        mapSet(seen, o, out);
        return out;
      }
      if (brand(P.mapSize, o)) {
        const out = new P.Map();
        mapSet(seen, o, out);
        let i = 0;
        P.mapForEach(o, (val: unknown, key: unknown) => {
          path[depth] = [`<key ${i}>`];
          const k = walk(key, depth + 1);
          path[depth] = [`<value ${i++}>`];
          mapSet(out, k, walk(val, depth + 1));
        });
        return out;
      }
      if (brand(P.setSize, o)) {
        const out = new P.Set();
        mapSet(seen, o, out);
        let i = 0;
        P.setForEach(o, (val: unknown) => {
          path[depth] = [`<item ${i++}>`];
          P.setAdd(out, walk(val, depth + 1));
        });
        return out;
      }
      if (brand((x) => P.weakMapHas(x, P.ObjectPrototype), o)) return fail('a WeakMap', depth);
      if (brand((x) => P.weakSetHas(x, P.ObjectPrototype), o)) return fail('a WeakSet', depth);
      if (o instanceof P.Promise) return fail('a Promise (await it first)', depth);
      if (P.isError ? P.isError(o) : o instanceof P.Error) {
        const e = o as Error;
        const name = P.String(e.name);
        const out = new P.Error(P.String(e.message));
        defineProperty(out, 'name', { value: name, writable: true, configurable: true });
        if (typeof e.stack === 'string') {
          defineProperty(out, 'stack', { value: e.stack, writable: true, configurable: true });
        }
        mapSet(seen, o, out);
        return out;
      }
      return NOT_SLOTTED;
    };
    return walk(value, 0);
  };
}
