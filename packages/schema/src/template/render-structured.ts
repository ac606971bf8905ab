import { parseTemplate } from './cache.ts';
import { nativeInText, placeholderValue, renderNodes } from './render.ts';
import { rootScope, type Scope, type TemplateContext } from './scope.ts';
import { TemplateError } from './template-error.ts';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function copyValue(value: unknown): unknown {
  // Primitives are immutable; structuredClone would cost microseconds per value for nothing.
  if (typeof value !== 'object' || value === null) return value;
  try {
    return structuredClone(value);
  } catch {
    return value; // not cloneable (a function in props): hand it over as is
  }
}

function renderString(text: string, scope: Scope): unknown {
  if (text.indexOf('{') < 0 && text.indexOf('@') < 0) return text;
  const nodes = parseTemplate(text);
  const only = nodes.length === 1 ? nodes[0]! : undefined;
  if (only?.type === 'native') return copyValue(placeholderValue(only, scope));
  const native = nodes.find((n) => n.type === 'native');
  if (native?.type === 'native') throw nativeInText(native);
  return renderNodes(nodes, scope, { iterations: 0 });
}

/**
 * Renders every string inside a JSON-like value (http headers, params, body, cli args) and returns a
 * deep copy; the input is never changed. Arrays and plain objects are walked (object keys are not
 * templated); other values are copied as they are.
 *
 * A string that is exactly `{!!path!!}` (fallbacks allowed: `{!!props.limit | 10!!}`) becomes the raw
 * value, keeping its JSON type (number, boolean, null, array, object). A `{!!...!!}` with other text
 * around it is an error.
 *
 * @param path Where `value` sits in a larger structure (`body.content`): the JSON paths in errors
 *   start there. @default '' (`value` is the whole structure)
 * @throws {TemplateError} as {@link renderTemplate}, with `path` set to the JSON path of the string
 * at fault (`body.content.tags[1]`); `TEMPLATE_TYPE` for a circular structure.
 * @see MCI schema reference, "JSON-Native Placeholders"
 */
export function renderStructured(value: unknown, context: TemplateContext, path = ''): unknown {
  const scope = rootScope(context);
  const ancestors = new Set<object>();
  const walk = (item: unknown, path: string): unknown => {
    if (typeof item === 'string') {
      try {
        return renderString(item, scope);
      } catch (error) {
        if (!(error instanceof TemplateError) || path === '') throw error;
        const { code, reason, line, placeholder } = error;
        throw new TemplateError(code, reason, { line, placeholder, path, cause: error.cause });
      }
    }
    const array = Array.isArray(item);
    if (!array && !isPlainObject(item)) return item;
    if (ancestors.has(item)) {
      throw new TemplateError('TEMPLATE_TYPE', 'the value to render is circular (it contains itself)', {
        path: path || undefined,
      });
    }
    ancestors.add(item);
    try {
      return array
        ? item.map((child, i) => walk(child, `${path}[${i}]`))
        : Object.fromEntries(
            Object.entries(item).map(([key, child]) => [
              key,
              walk(child, path === '' ? key : `${path}.${key}`),
            ]),
          );
    } finally {
      ancestors.delete(item);
    }
  };
  return walk(value, path);
}
