import type { ForeachNode, ForNode, Operand, PlaceholderNode, TemplateNode } from './ast.ts';
import { parseTemplate } from './cache.ts';
import { asNumber, conditionHolds, operandValue } from './condition.ts';
import {
  type Binding,
  describeValue,
  explainMissing,
  MISSING,
  rootScope,
  type Scope,
  type TemplateContext,
} from './scope.ts';
import { MAX_LOOP_ITERATIONS, MAX_OUTPUT_LENGTH } from './limits.ts';
import { TemplateError } from './template-error.ts';

/** Per-render bookkeeping. */
interface RenderState {
  iterations: number;
}

/**
 * Renders a template against a context.
 *
 * - `{{path}}` / `{{ path }}` inserts a value: strings as is, numbers and booleans via `String()`,
 *   `null` as `null`, arrays and objects as JSON. `{{a | b | 'literal'}}` uses the first alternative
 *   that resolves to something other than null.
 * - `@for(i in range(a, b))`, `@foreach(item in path)`, `@if(...)`/`@elseif`/`@else`/`@endif` blocks;
 *   a directive alone on its line takes the whole line with it.
 *
 * The template is parsed once and cached (see {@link parseTemplate}). See `docs/templating.md`.
 *
 * @throws {TemplateError} `TEMPLATE_SYNTAX` (malformed template, or a `{!!...!!}` placeholder, which
 * only works as a whole value in {@link renderStructured}), `TEMPLATE_UNRESOLVED` (a path that does
 * not resolve and has no fallback), `TEMPLATE_TYPE`, `TEMPLATE_LIMIT` (see `limits.ts`).
 * @see MCI schema reference, "Templating Syntax"
 */
export function renderTemplate(template: string, context: TemplateContext): string {
  // Nothing to do without a brace or an at sign (most header values, enum-like strings).
  if (template.indexOf('{') < 0 && template.indexOf('@') < 0) return template;
  return renderNodes(parseTemplate(template), rootScope(context), { iterations: 0 });
}

/** Renders parsed nodes; exported for the structured renderer and benchmarks. */
export function renderNodes(nodes: readonly TemplateNode[], scope: Scope, state: RenderState): string {
  let out = '';
  for (const node of nodes) {
    switch (node.type) {
      case 'text':
        out += node.value;
        break;
      case 'placeholder':
        out += formatValue(placeholderValue(node, scope), node);
        break;
      case 'native':
        throw nativeInText(node);
      case 'for':
        out += renderFor(node, scope, state);
        break;
      case 'foreach':
        out += renderForeach(node, scope, state);
        break;
      case 'if': {
        const branch = node.branches.find((b) => conditionHolds(b, scope));
        const body = branch ? branch.body : node.otherwise;
        if (body) out += renderNodes(body, scope, state);
        break;
      }
    }
  }
  return out;
}

/** The error for a `{!!...!!}` placeholder that is not a whole structured value. */
export function nativeInText(node: PlaceholderNode): TemplateError {
  const inner = node.source.slice(3, -3).trim();
  return new TemplateError(
    'TEMPLATE_SYNTAX',
    `'${node.source}': a JSON-native placeholder must be the entire value of a field (in http headers, params, body or cli args), with no text around it; to insert the value into text, use {{${inner}}}`,
    { line: node.line, placeholder: node.source },
  );
}

/**
 * The value of a placeholder: its first alternative that resolves to something other than null,
 * else null if one resolved to null. Throws `TEMPLATE_UNRESOLVED` when none resolves.
 */
export function placeholderValue(node: PlaceholderNode, scope: Scope): unknown {
  let sawNull = false;
  for (const alternative of node.alternatives) {
    const value = operandValue(alternative, scope);
    if (value === null) sawNull = true;
    else if (value !== MISSING) return value;
  }
  if (sawNull) return null;
  const reasons = node.alternatives.flatMap((a) => (a.kind === 'path' ? [explainMissing(a, scope)] : []));
  const first = node.alternatives[0]!;
  const hint =
    node.alternatives.length === 1
      ? `; ${first.text.startsWith('env.') ? 'set it' : 'pass a value for it'}, or add a fallback: ${
          node.type === 'native' ? `{!!${first.text} | 'default'!!}` : `{{${first.text} | 'default'}}`
        }`
      : '';
  throw new TemplateError(
    'TEMPLATE_UNRESOLVED',
    `'${node.source}' does not resolve: ${reasons.join('; ')}${hint}`,
    { line: node.line, placeholder: node.source },
  );
}

/** Strings as is, numbers/booleans via `String()`, null as `null`, arrays and objects as JSON. */
function formatValue(value: unknown, node: PlaceholderNode): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      try {
        return value === null ? 'null' : JSON.stringify(value);
      } catch (cause) {
        throw new TemplateError(
          'TEMPLATE_TYPE',
          `'${node.source}': the value cannot be written as JSON (${String(cause)})`,
          {
            line: node.line,
            placeholder: node.source,
            cause,
          },
        );
      }
    default:
      throw new TemplateError('TEMPLATE_TYPE', `'${node.source}': a ${typeof value} cannot be rendered`, {
        line: node.line,
        placeholder: node.source,
      });
  }
}

/** Counts one loop iteration and checks the output so far against the limits. */
function countIteration(state: RenderState, node: ForNode | ForeachNode, output: string): void {
  const site = { line: node.line, placeholder: node.source };
  if (++state.iterations > MAX_LOOP_ITERATIONS) {
    throw new TemplateError(
      'TEMPLATE_LIMIT',
      `'${node.source}': the template ran more than ${MAX_LOOP_ITERATIONS} loop iterations; narrow the range or the collection`,
      site,
    );
  }
  if (output.length > MAX_OUTPUT_LENGTH) {
    throw new TemplateError(
      'TEMPLATE_LIMIT',
      `'${node.source}': the output grew past ${MAX_OUTPUT_LENGTH} characters; narrow the range or the collection`,
      site,
    );
  }
}

function rangeBound(bound: Operand, node: ForNode, scope: Scope): number {
  const value = operandValue(bound, scope);
  const site = { line: node.line, placeholder: node.source };
  if (value === MISSING && bound.kind === 'path') {
    throw new TemplateError('TEMPLATE_UNRESOLVED', `'${node.source}': ${explainMissing(bound, scope)}`, site);
  }
  const number = asNumber(value);
  if (number === undefined || !Number.isInteger(number)) {
    throw new TemplateError(
      'TEMPLATE_TYPE',
      `'${node.source}': range bounds must be integers, but ${bound.text} is ${describeValue(value, bound)}`,
      site,
    );
  }
  return number;
}

function renderFor(node: ForNode, scope: Scope, state: RenderState): string {
  const start = rangeBound(node.start, node, scope);
  const end = rangeBound(node.end, node, scope);
  const binding: Binding = { name: node.variable, value: start, parent: scope.vars };
  const inner: Scope = { ...scope, vars: binding };
  let out = '';
  for (let i = start; i < end; i++) {
    countIteration(state, node, out);
    binding.value = i;
    out += renderNodes(node.body, inner, state);
  }
  return out;
}

function renderForeach(node: ForeachNode, scope: Scope, state: RenderState): string {
  const collection = operandValue(node.collection, scope);
  const site = { line: node.line, placeholder: node.source };
  if (collection === MISSING) {
    throw new TemplateError(
      'TEMPLATE_UNRESOLVED',
      `'${node.source}': ${explainMissing(node.collection, scope)}; to allow a missing list, wrap the loop in @if(${node.collection.text})`,
      site,
    );
  }
  // Arrays give their elements; objects their entries' values, with the key beside (`v.key`).
  let values: readonly unknown[];
  let keys: readonly string[] | undefined;
  if (Array.isArray(collection)) values = collection;
  else if (typeof collection === 'object' && collection !== null) {
    keys = Object.keys(collection);
    values = Object.values(collection);
  } else {
    throw new TemplateError(
      'TEMPLATE_TYPE',
      `'${node.source}': @foreach needs an array or an object, but ${node.collection.text} is ${describeValue(collection, node.collection)}`,
      site,
    );
  }
  const binding: Binding = { name: node.variable, value: undefined, parent: scope.vars };
  const inner: Scope = { ...scope, vars: binding };
  let out = '';
  for (let i = 0; i < values.length; i++) {
    countIteration(state, node, out);
    binding.key = keys?.[i];
    binding.value = values[i];
    out += renderNodes(node.body, inner, state);
  }
  return out;
}
