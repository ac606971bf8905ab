// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).

/**
 * Captures the built-ins the bootstrap relies on before any sandboxed code runs, so a program that
 * reassigns `JSON`, `Promise` or `Map.prototype.set` breaks only itself, not `output()` or `tools`.
 *
 * This is robustness, not the security boundary: the worker process treats everything that comes
 * out of the isolate as untrusted data, whatever the bootstrap did.
 */
export function capturePrimordials() {
  const uncurry = <A extends unknown[], R>(fn: (...args: A) => R) =>
    Function.prototype.call.bind(fn) as unknown as (self: unknown, ...args: A) => R;
  const getter = (proto: object, key: PropertyKey) =>
    uncurry(Object.getOwnPropertyDescriptor(proto, key)!.get as () => unknown);
  const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
  const getPrototypeOf = Object.getPrototypeOf;
  const ObjectPrototype = Object.prototype;
  // Prototypes of the built-ins whose objects carry internal slots that copying must look at.
  const slotted: object[] = [
    ArrayBuffer.prototype,
    Date.prototype,
    RegExp.prototype,
    Map.prototype,
    Set.prototype,
    WeakMap.prototype,
    WeakSet.prototype,
    Promise.prototype,
    Error.prototype,
  ];
  /**
   * Which slotted built-in `o` inherits from: the index in `slotted` above (ArrayBuffer 0, Date 1,
   * RegExp 2, Map 3, Set 4, WeakMap 5, WeakSet 6, Promise 7, Error 8) of the first such prototype
   * on its chain, `slotted.length` for a chain longer than 1000 (the brand checks decide), and -1
   * for plain objects, arrays and class instances, which then skip the brand checks: each failed
   * check throws, and a thrown error costs microseconds. A built-in whose prototype chain was
   * rewired to avoid those prototypes counts as a plain object.
   */
  const slottedKind = (o: object): number => {
    let proto = getPrototypeOf(o) as object | null;
    for (let depth = 0; proto !== null && proto !== ObjectPrototype; depth++) {
      if (depth > 1000) return slotted.length;
      for (let i = 0; i < slotted.length; i++) if (proto === slotted[i]) return i;
      proto = getPrototypeOf(proto) as object | null;
    }
    return -1;
  };
  /** True when `check(v)` does not throw: `v` has the internal slots `check` reads (a brand check). */
  const hasBrand = (check: (v: unknown) => unknown, v: unknown): boolean => {
    try {
      check(v);
      return true;
    } catch {
      return false;
    }
  };
  // No prototype: V8 builds a literal with `__proto__: null` as a dictionary-mode object, where a
  // plain literal of this size costs a map transition and a field-type update per property in every
  // fresh isolate, about four times slower (see docs/notes/sandbox-performance.md). Lookups
  // on it are a little slower: hot paths (the cloner's per-node calls) keep what they use in locals.
  // It also means no `Object.prototype` member can be reached through `P`.
  return {
    __proto__: null,
    Array,
    Date,
    Error,
    JSON,
    Map,
    Promise,
    RegExp,
    Set,
    String,
    TypeError,
    RangeError,
    Uint8Array,
    DataView,
    ArrayBuffer,
    globalThis,
    Proxy,
    reflectGet: Reflect.get,
    apply: Reflect.apply,
    construct: Reflect.construct,
    ownKeys: Reflect.ownKeys,
    defineProperty: Object.defineProperty,
    getPrototypeOf: Object.getPrototypeOf,
    setPrototypeOf: Object.setPrototypeOf,
    getOwnPropertyDescriptor: Object.getOwnPropertyDescriptor,
    objectKeys: Object.keys,
    objectCreate: Object.create,
    objectFreeze: Object.freeze,
    ObjectPrototype: Object.prototype,
    ArrayPrototype: Array.prototype,
    isArray: Array.isArray,
    slottedKind,
    hasBrand,
    isView: ArrayBuffer.isView,
    isError: (Error as unknown as { isError?: (v: unknown) => boolean }).isError,
    jsonStringify: JSON.stringify,
    jsonParse: JSON.parse,
    Math,
    imul: Math.imul,
    mathMin: Math.min,
    mathMax: Math.max,
    mathFloor: Math.floor,
    numberIsFinite: Number.isFinite,
    promiseThen: uncurry(Promise.prototype.then),
    promiseResolve: Promise.resolve.bind(Promise),
    mapGet: uncurry(Map.prototype.get),
    mapSet: uncurry(Map.prototype.set),
    mapHas: uncurry(Map.prototype.has),
    mapDelete: uncurry(Map.prototype.delete),
    mapForEach: uncurry(Map.prototype.forEach),
    mapSize: getter(Map.prototype, 'size') as (self: unknown) => number,
    setAdd: uncurry(Set.prototype.add),
    setForEach: uncurry(Set.prototype.forEach),
    setSize: getter(Set.prototype, 'size') as (self: unknown) => number,
    weakMapHas: uncurry(WeakMap.prototype.has),
    weakSetHas: uncurry(WeakSet.prototype.has),
    dateGetTime: uncurry(Date.prototype.getTime),
    regExpSource: getter(RegExp.prototype, 'source') as (self: unknown) => string,
    regExpFlags: getter(RegExp.prototype, 'flags') as (self: unknown) => string,
    arrayBufferByteLength: getter(ArrayBuffer.prototype, 'byteLength') as (self: unknown) => number,
    typedArrayName: getter(TypedArrayPrototype, Symbol.toStringTag) as (self: unknown) => string | undefined,
    typedArrayBuffer: getter(TypedArrayPrototype, 'buffer') as (self: unknown) => ArrayBuffer,
    typedArrayByteOffset: getter(TypedArrayPrototype, 'byteOffset') as (self: unknown) => number,
    typedArrayByteLength: getter(TypedArrayPrototype, 'byteLength') as (self: unknown) => number,
    dataViewBuffer: getter(DataView.prototype, 'buffer') as (self: unknown) => ArrayBuffer,
    dataViewByteOffset: getter(DataView.prototype, 'byteOffset') as (self: unknown) => number,
    dataViewByteLength: getter(DataView.prototype, 'byteLength') as (self: unknown) => number,
    arrayPush: uncurry(Array.prototype.push) as (self: unknown[], ...items: unknown[]) => number,
    arrayJoin: uncurry(Array.prototype.join) as (self: unknown[], sep: string) => string,
    arraySlice: uncurry(Array.prototype.slice) as (
      self: unknown[],
      start?: number,
      end?: number,
    ) => unknown[],
    arraySort: uncurry(Array.prototype.sort) as (
      self: unknown[],
      cmp?: (a: never, b: never) => number,
    ) => unknown[],
    stringToLowerCase: uncurry(String.prototype.toLowerCase) as (self: string) => string,
    stringToUpperCase: uncurry(String.prototype.toUpperCase) as (self: string) => string,
    stringTrim: uncurry(String.prototype.trim) as (self: string) => string,
    regExpTest: uncurry(RegExp.prototype.test) as (self: RegExp, s: string) => boolean,
    functionToString: uncurry(Function.prototype.toString) as (self: unknown) => string,
  };
}

/** The captured built-ins, as the other bootstrap parts receive them. */
export type Primordials = ReturnType<typeof capturePrimordials>;
