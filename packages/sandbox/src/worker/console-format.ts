import { formatWithOptions, inspect } from 'node:util';
import { cleanStack } from './transpile.ts';

const MARK = '__mci_inspect__';

/** An object that `util.inspect` prints as the given text (a stand-in for an isolate value). */
class Shown {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  [inspect.custom]() {
    return this.#text;
  }
  toString() {
    return this.#text;
  }
}

const classes = new Map<string, { prototype: object }>();
/** A prototype whose constructor is named `name`, so inspect prints `Name { ... }`. */
function prototypeNamed(name: string): object {
  let ctor = classes.get(name);
  if (!ctor) {
    ctor = class {};
    Object.defineProperty(ctor, 'name', { value: name });
    if (classes.size < 1000) classes.set(name, ctor);
  }
  return ctor.prototype;
}

const text = (v: unknown, fallback = '') => (typeof v === 'string' ? v : fallback);

/**
 * Rebuilds a value made by the bootstrap's `inspectCopy` into something `util.inspect` renders the way
 * Node renders the original. Only data properties are created, on fresh objects.
 */
function rebuild(value: unknown, seen: Map<object, unknown>, filename: string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  if (value instanceof Map) {
    const out = new Map();
    seen.set(value, out);
    for (const [k, v] of value) out.set(rebuild(k, seen, filename), rebuild(v, seen, filename));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set();
    seen.set(value, out);
    for (const v of value) out.add(rebuild(v, seen, filename));
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = rebuild(value[i], seen, filename);
    return out;
  }
  if (
    ArrayBuffer.isView(value) ||
    value instanceof ArrayBuffer ||
    value instanceof Date ||
    value instanceof RegExp
  ) {
    return value;
  }
  const record = value as Record<string, unknown>;
  const kind = Object.hasOwn(record, MARK) ? record[MARK] : undefined;
  switch (kind) {
    case 'function': {
      const name = text(record.name);
      if (record.kind === 'class') return new Shown(name ? `[class ${name}]` : '[class (anonymous)]');
      return new Shown(`[${text(record.kind, 'Function')}${name ? `: ${name}` : ' (anonymous)'}]`);
    }
    case 'symbol':
      return new Shown(`Symbol(${text(record.description)})`);
    case 'accessor':
      return new Shown(record.get && record.set ? '[Getter/Setter]' : record.get ? '[Getter]' : '[Setter]');
    case 'promise':
      return new Shown('Promise { <pending> }');
    case 'weak':
      return new Shown(`${text(record.name)} { <items unknown> }`);
    case 'depth':
      return new Shown(`[${text(record.name, 'Object')}]`);
    case 'error': {
      const stack = text(record.stack) || `${text(record.name, 'Error')}: ${text(record.message)}`;
      return new Shown(cleanStack(stack, filename));
    }
    case 'instance': {
      const name = record.name;
      const out = Object.create(typeof name === 'string' ? prototypeNamed(name) : null) as Record<
        string,
        unknown
      >;
      seen.set(value, out);
      copyProps(record.value, out, seen, filename);
      return out;
    }
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  copyProps(record, out, seen, filename);
  return out;
}

function copyProps(from: unknown, to: Record<string, unknown>, seen: Map<object, unknown>, filename: string) {
  if (typeof from !== 'object' || from === null) return;
  for (const key of Object.keys(from)) {
    const value = rebuild((from as Record<string, unknown>)[key], seen, filename);
    Object.defineProperty(to, key, { value, writable: true, enumerable: true, configurable: true });
  }
}

/** Formats the copied arguments of one `console.*` call like Node's console (util.format rules). */
export function formatLogArgs(args: unknown, filename: string): string {
  if (!Array.isArray(args)) return '';
  const seen = new Map<object, unknown>();
  const values = args.map((a) => rebuild(a, seen, filename));
  return formatWithOptions({ colors: false }, ...values);
}
