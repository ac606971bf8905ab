import { renderStructured, type TemplateContext } from '@mci/schema';

/** Renders one loaded value against one execution's context. */
type Plan = (context: TemplateContext) => unknown;

// Loaded tool definitions never change, so each value is planned once.
const plans = new WeakMap<object, Plan>();

/** Thrown while planning a value that contains itself; renderStructured reports it. */
const CIRCULAR = Symbol('circular');

/**
 * Renders a structured field of a loaded tool definition (http headers, params, body, auth) to the
 * same value, and with the same errors, as `renderStructured`, but works out once per definition
 * which strings hold templates. Each call then renders only those strings (each with
 * `renderStructured`, so `{!!path!!}` keeps the value's JSON type) and builds new arrays and objects
 * only on the way to them; the parts without templates are handed over as loaded, not copied, so the
 * result must never be changed.
 *
 * @throws {TemplateError} as `renderStructured`, with `path` set to the JSON path of the string at
 *   fault (`content.tags[1]`).
 */
export function renderLoaded(value: unknown, context: TemplateContext): unknown {
  if (typeof value === 'string') return hasTemplate(value) ? renderStructured(value, context) : value;
  if (!isContainer(value)) return value;
  let plan = plans.get(value);
  if (!plan) {
    plan = planFor(value);
    plans.set(value, plan);
  }
  return plan(context);
}

function planFor(root: object): Plan {
  try {
    return planValue(root, '', new Set()) ?? (() => root);
  } catch (error) {
    if (error === CIRCULAR) return (context) => renderStructured(root, context);
    throw error;
  }
}

/** The plan of `value` at JSON path `path`, or undefined when it holds no template. */
function planValue(value: unknown, path: string, ancestors: Set<object>): Plan | undefined {
  if (typeof value === 'string')
    return hasTemplate(value) ? (context) => renderStructured(value, context, path) : undefined;
  if (!isContainer(value)) return undefined;
  if (ancestors.has(value)) throw CIRCULAR;
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items: unknown[] = value;
      const children = items.map((item, i) => planValue(item, `${path}[${i}]`, ancestors));
      if (children.every((child) => child === undefined)) return undefined;
      return (context) =>
        items.map((item, i) => {
          const child = children[i];
          return child ? child(context) : item;
        });
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    const children = keys.map((key) =>
      planValue(record[key], path === '' ? key : `${path}.${key}`, ancestors),
    );
    if (children.every((child) => child === undefined)) return undefined;
    return (context) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const child = children[i];
        const rendered = child ? child(context) : record[key];
        // An own `__proto__` key (JSON can have one) must stay a key, not become the prototype.
        if (key === '__proto__') {
          Object.defineProperty(out, key, {
            value: rendered,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else out[key] = rendered;
      }
      return out;
    };
  } finally {
    ancestors.delete(value);
  }
}

/** Whether a string can be a template at all (the engine's own quick test: a `{` or an `@`). */
function hasTemplate(text: string): boolean {
  return text.indexOf('{') >= 0 || text.indexOf('@') >= 0;
}

/** Arrays and plain objects are walked; any other value is handed over as it is. */
function isContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
