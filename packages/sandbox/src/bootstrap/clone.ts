// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Primordials } from './primordials.ts';

/** Copies values by structured-clone rules; see {@link createCloner}. */
export interface Cloner {
  /** A copy that stays in the isolate (`structuredClone`). */
  copy(value: unknown, what: string): unknown;
  /** A copy that goes straight out of the isolate (a tool's props) and never reaches the program. */
  copyOut(value: unknown, what: string): unknown;
  /**
   * An output: as JSON text when the value is an object or array that JSON carries exactly (see
   * {@link createCloner}), else as a copy made like {@link Cloner.copyOut}. The result object has
   * no prototype (a program's `Object.prototype.json` cannot make a value look like text).
   */
  copyOutput(value: unknown, what: string): { json: string } | { value: unknown };
}

/**
 * Returns the {@link Cloner}: deep copies of a value made of plain data only (primitives, plain
 * objects, arrays, Date, RegExp, Map, Set, ArrayBuffer and views, Error), following the structured
 * clone rules (own enumerable string keys, getters read, prototypes dropped, cycles kept). A part
 * that cannot be copied (function, symbol, promise, WeakMap...) throws a `TypeError` naming its path,
 * for example `output(): value.items[2].callback is a function and cannot be copied out of the sandbox`.
 *
 * Buffers are always copied into fresh, non-shared memory, whatever `Symbol.species` says.
 *
 * Objects are told apart by brand checks (internal slots), which run only for objects whose
 * prototype chain passes through a slotted built-in's prototype (see `slottedKind`): plain
 * objects, arrays and class instances, the usual props and outputs, are copied without a thrown
 * check. Paths are built only for the error message. A value nested more than 1000 levels deep is
 * refused (a `TypeError`; see `MAX_DEPTH`).
 *
 * Plain objects are built in one of two ways:
 * - A copy that stays in the isolate (`structuredClone`) gets `Object.prototype`, and its keys are
 *   defined with `defineProperty`, so a setter a program put on `Object.prototype` never runs and a
 *   `__proto__` key stays an own property.
 * - A copy that is `leaving` (sent out of the isolate, which drops prototypes anyway) gets as its
 *   prototype a frozen, empty object whose own prototype is `null`: nothing on that chain can
 *   intercept a plain assignment, and `__proto__` is an ordinary key. Assignment is about twice
 *   as fast as `defineProperty` (20,000 small objects copied and handed to isolated-vm: 90 against
 *   170 ms, with CPU burners running).
 *
 * An output that JSON carries exactly leaves as JSON text (`JSON.stringify` of the copy): isolated-vm
 * then copies one string, and the worker forwards it without decoding and re-encoding a structure.
 * Exactly means: objects and arrays of strings, booleans, null and finite numbers other than -0,
 * with no object reached twice (structured clone keeps shared references and cycles, JSON does not)
 * and no `toJSON` a program put on `Array.prototype` or `Object.prototype`. Anything else (Date,
 * Map, undefined, bigint, typed arrays...) leaves as a copy, by structured-clone rules.
 */
export function createCloner(P: Primordials): Cloner {
  // The per-node ones as locals: `P` is a dictionary-mode object (see `capturePrimordials`).
  const { mapHas, mapGet, mapSet, isArray, isView, slottedKind, objectKeys, defineProperty, numberIsFinite } =
    P;
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
  /**
   * Levels of objects and arrays a copy may have. Deeper values are refused here, with a clear
   * error: what copies them further (isolated-vm, the worker's and the host's V8 serializers, the
   * server's JSON.stringify) recurses, and a value a few thousand levels deep overflowed their stacks
   * (an output lost, its execution waiting for it until its timeout).
   */
  const MAX_DEPTH = 1000;
  /** Path segments an error message shows at most (then `…`). */
  const MAX_PATH_SEGMENTS = 32;
  /** The kinds `slottedKind` numbers (0 ArrayBuffer ... 8 Error). */
  const SLOTTED_KINDS = 9;
  /** The prototype of the objects of a `leaving` copy (see above). */
  const BARE = P.objectFreeze(P.objectCreate(null));

  /** Cleared by any clone that meets something JSON would not carry exactly (read by `copyOutput`). */
  let exact = true;
  const clone = (value: unknown, what: string, leaving: boolean): unknown => {
    const seen = new P.Map<object, unknown>();
    // The path to the value being copied, as segments (`path[d]` leads from depth d to d + 1); only
    // a failure turns it into text, so the common case builds no strings. An array index is a
    // number, an object key a string, a Map or Set position a label such as `<key 0>` in an array.
    // (No helper frame per level: the error's stack must still reach the program's own line.)
    // No prototype: a program's index setters on Array.prototype must not see these writes.
    const path = P.setPrototypeOf([], null) as Array<number | string | [string]>;
    const fail = (kind: string, depth: number): never => {
      let text = 'value';
      const shown = P.mathMin(depth, MAX_PATH_SEGMENTS);
      for (let i = 0; i < shown; i++) {
        const segment = path[i]!;
        text =
          typeof segment === 'number'
            ? `${text}[${segment}]`
            : typeof segment === 'string'
              ? child(text, segment)
              : `${text}${segment[0]}`;
      }
      if (shown < depth) text += '…';
      if (depth === 0) text = 'the value';
      throw new P.TypeError(`${what}: ${text} is ${kind} and cannot be copied out of the sandbox`);
    };
    const walk = (v: unknown, depth: number): unknown => {
      switch (typeof v) {
        case 'string':
        case 'boolean':
          return v;
        case 'number':
          if (v === 0 ? 1 / v < 0 : !numberIsFinite(v)) exact = false;
          return v;
        case 'undefined':
        case 'bigint':
          exact = false;
          return v;
        case 'symbol':
          return fail('a symbol', depth);
        case 'function':
          return fail('a function', depth);
      }
      if (v === null) return null;
      const o = v as object;
      if (mapHas(seen, o)) {
        exact = false;
        return mapGet(seen, o);
      }
      if (depth >= MAX_DEPTH) return fail(`nested more than ${MAX_DEPTH} levels deep`, depth);
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
        exact = false;
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
      const kind = slottedKind(o);
      if (kind !== -1) {
        const out = copySlotted(o, depth, kind);
        if (out !== NOT_SLOTTED) {
          exact = false;
          return out;
        }
      }
      const keys = objectKeys(o);
      if (leaving) {
        const out: Record<string, unknown> = { __proto__: BARE };
        mapSet(seen, o, out);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!;
          path[depth] = key;
          out[key] = walk((o as Record<string, unknown>)[key], depth + 1);
        }
        return out;
      }
      const out: Record<string, unknown> = {};
      mapSet(seen, o, out);
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
    // Built-ins with internal slots, told apart by brand checks (a check throws for other objects,
    // and a thrown error costs microseconds): the kind the prototype chain names (see `slottedKind`)
    // is checked first, so a real Date or Map passes its first check; the other kinds are tried only
    // for an object that is not what its chain says (`Object.create(Date.prototype)`, a Map made
    // with `Reflect.construct(Map, [], Error)`).
    const copySlotted = (o: object, depth: number, hint: number): unknown => {
      const out = copyKind(o, depth, hint);
      if (out !== NOT_SLOTTED) return out;
      for (let kind = 0; kind < SLOTTED_KINDS; kind++) {
        if (kind === hint) continue;
        const other = copyKind(o, depth, kind);
        if (other !== NOT_SLOTTED) return other;
      }
      return NOT_SLOTTED;
    };
    /** The copy of `o` if it is a built-in of `kind` (numbered as in `slottedKind`), else NOT_SLOTTED. */
    const copyKind = (o: object, depth: number, kind: number): unknown => {
      switch (kind) {
        case 0: {
          if (!brand(P.arrayBufferByteLength, o)) return NOT_SLOTTED;
          const out = copyBytes(o as ArrayBuffer, 0, P.arrayBufferByteLength(o)).buffer;
          mapSet(seen, o, out);
          return out;
        }
        case 1: {
          if (!brand(P.dateGetTime, o)) return NOT_SLOTTED;
          const out = new P.Date(P.dateGetTime(o));
          mapSet(seen, o, out);
          return out;
        }
        case 2: {
          if (!brand(P.regExpSource, o) || o === P.RegExp.prototype) return NOT_SLOTTED;
          const out = new P.RegExp(P.regExpSource(o), P.regExpFlags(o));
          mapSet(seen, o, out);
          return out;
        }
        case 3: {
          if (!brand(P.mapSize, o)) return NOT_SLOTTED;
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
        case 4: {
          if (!brand(P.setSize, o)) return NOT_SLOTTED;
          const out = new P.Set();
          mapSet(seen, o, out);
          let i = 0;
          P.setForEach(o, (val: unknown) => {
            path[depth] = [`<item ${i++}>`];
            P.setAdd(out, walk(val, depth + 1));
          });
          return out;
        }
        case 5:
          return brand((x) => P.weakMapHas(x, P.ObjectPrototype), o) ? fail('a WeakMap', depth) : NOT_SLOTTED;
        case 6:
          return brand((x) => P.weakSetHas(x, P.ObjectPrototype), o) ? fail('a WeakSet', depth) : NOT_SLOTTED;
        case 7:
          return o instanceof P.Promise ? fail('a Promise (await it first)', depth) : NOT_SLOTTED;
      }
      // 8: Error
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
  return {
    copy: (value, what) => clone(value, what, false),
    copyOut: (value, what) => clone(value, what, true),
    copyOutput(value, what) {
      if (typeof value !== 'object' || value === null)
        return { __proto__: null, value: clone(value, what, true) };
      // Saved and restored: a getter read by this clone may output a value of its own.
      const outer = exact;
      exact = true;
      try {
        const copy = clone(value, what, true);
        if (exact && !('toJSON' in P.ArrayPrototype)) {
          try {
            return { __proto__: null, json: P.jsonStringify(copy) };
          } catch {
            // Too long for one string: the copy goes as it is (and meets the output budget).
          }
        }
        return { __proto__: null, value: copy };
      } finally {
        exact = outer;
      }
    },
  };
}
