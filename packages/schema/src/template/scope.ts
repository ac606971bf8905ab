/**
 * The values a template sees: the context (`props`, `input`, `env`) plus the loop variables in
 * scope, and how dotted paths resolve against them.
 */
import type { Operand, PathOperand } from './ast.ts';

/**
 * What a template renders against.
 * @see MCI schema reference, "Templating Syntax / Context Structure"
 */
export interface TemplateContext {
  /** The tool call's properties (its input), reached as `props.x`. */
  props: Record<string, unknown>;
  /** Environment variables, reached as `env.NAME`; an `undefined` value counts as not set. */
  env: Record<string, string | undefined>;
  /** `input.x`: an alias of `props` (older MCI files use it). @default props */
  input?: Record<string, unknown> | undefined;
}

/**
 * A loop variable; a loop updates its binding's value in place on each iteration. In a `@foreach`
 * over an object the variable is the entry's value and `key` is the entry's key: `v.key` gives the
 * key, `v.value` the value, any other path goes into the value (as in mci-py).
 */
export interface Binding {
  readonly name: string;
  value: unknown;
  key?: string | undefined;
  readonly parent: Binding | undefined;
}

/** A context plus the loop variables in scope (innermost first). */
export interface Scope {
  readonly props: Record<string, unknown>;
  readonly input: Record<string, unknown>;
  readonly env: Record<string, string | undefined>;
  readonly vars: Binding | undefined;
}

/** Returned by {@link resolvePath} when a path does not resolve. */
export const MISSING: unique symbol = Symbol('missing');

/** The scope at the top of a template. */
export function rootScope(context: TemplateContext): Scope {
  return { props: context.props, input: context.input ?? context.props, env: context.env, vars: undefined };
}

function rootBinding(name: string, scope: Scope): Binding | undefined {
  for (let b = scope.vars; b; b = b.parent) if (b.name === name) return b;
  return undefined;
}

function contextValue(name: string, scope: Scope): unknown {
  if (name === 'props') return scope.props;
  if (name === 'input') return scope.input;
  if (name === 'env') return scope.env;
  return MISSING;
}

/** The value the path's first segments name and how many segments that took. */
function start(segments: readonly string[], scope: Scope): [value: unknown, used: number] {
  const binding = rootBinding(segments[0]!, scope);
  if (!binding) return [contextValue(segments[0]!, scope), 1];
  if (binding.key !== undefined && segments[1] === 'key') return [binding.key, 2];
  if (binding.key !== undefined && segments[1] === 'value') return [binding.value, 2];
  return [binding.value, 1];
}

function isIndex(segment: string): boolean {
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return segment.length > 0;
}

/** One step down a path; only own properties count, so `constructor` or `__proto__` never leak. */
function child(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) {
    if (!isIndex(segment)) return MISSING;
    const index = Number(segment);
    return index < value.length && value[index] !== undefined ? value[index] : MISSING;
  }
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment)) {
    const next = (value as Record<string, unknown>)[segment];
    return next === undefined ? MISSING : next;
  }
  return MISSING;
}

/** The value at `path`, or {@link MISSING}. */
export function resolvePath(path: PathOperand, scope: Scope): unknown {
  const { segments } = path;
  let [value, i] = start(segments, scope);
  for (; i < segments.length && value !== MISSING; i++) value = child(value, segments[i]!);
  return value;
}

/** A short, readable rendering of a value for error messages. */
export function preview(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Says why `path` does not resolve, for an error message (`props.user has no key 'mail' (keys: name, email)`). */
export function explainMissing(path: PathOperand, scope: Scope): string {
  const [value0, used] = start(path.segments, scope);
  const root = path.segments.slice(0, used).join('.');
  const rest = path.segments.slice(used);
  let value = value0;
  if (value === MISSING) {
    const vars: string[] = [];
    for (let b = scope.vars; b; b = b.parent) if (!vars.includes(b.name)) vars.push(b.name);
    return `'${root}' is not defined here: paths start with props., input., env.${
      vars.length > 0 ? ` or a loop variable (${vars.join(', ')})` : ''
    }`;
  }
  if (root === 'env') return `environment variable ${rest[0]} is not set`;
  let at = root;
  for (const segment of rest) {
    const next = child(value, segment);
    if (next === MISSING) {
      if (Array.isArray(value)) {
        return isIndex(segment)
          ? `${at} has ${value.length} element${value.length === 1 ? '' : 's'}, so index ${segment} is out of range`
          : `${at} is an array: index it with a number (${at}.0), not '${segment}'`;
      }
      if (typeof value === 'object' && value !== null) {
        const keys = Object.keys(value);
        if (Object.hasOwn(value, segment)) return `${at}.${segment} is undefined`;
        return `${at} has no key '${segment}' (${
          keys.length === 0
            ? 'it is empty'
            : `its keys: ${keys.slice(0, 10).join(', ')}${keys.length > 10 ? ', ...' : ''}`
        })`;
      }
      return `${at} is ${describeValue(value)}, so it has no '${segment}'`;
    }
    value = next;
    at = `${at}.${segment}`;
  }
  return `${path.text} does not resolve`;
}

/**
 * What a value is, for type errors: `null`, `an array`, `a string ("abc")`. The values of
 * environment variables are never shown (they are often secrets): pass the operand to hide them.
 */
export function describeValue(value: unknown, operand?: Operand): string {
  if (value === null) return 'null';
  const kind = kindOf(value);
  if (kind === 'an array' || kind === 'an object') return kind;
  if (operand?.kind === 'path' && operand.segments[0] === 'env') return `${kind} (value not shown)`;
  return `${kind} (${preview(value)})`;
}
