/**
 * Parsing of what sits inside placeholders and directive parentheses: operands (paths and
 * literals), fallback chains, `@if` conditions, and the heads of `@for` / `@foreach`.
 */
import type { ComparisonOperator, Condition, Operand, PathOperand } from './ast.ts';
import { TemplateError } from './template-error.ts';

/** Where an expression sits, for error messages. */
export interface ExpressionSite {
  readonly line: number;
  /** The whole placeholder or directive as written. */
  readonly source: string;
}

const PATH = /^[A-Za-z_$][\w$]*(?:\.[\w$-]+)*$/;
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const IDENTIFIER = /^[A-Za-z_]\w*$/;
const QUOTES = new Set(["'", '"', '`']);
/** Root names a loop variable may not take: they would hide the context. */
export const CONTEXT_ROOTS: ReadonlySet<string> = new Set(['props', 'input', 'env']);

function syntax(message: string, site: ExpressionSite): TemplateError {
  return new TemplateError('TEMPLATE_SYNTAX', `'${site.source}': ${message}`, {
    line: site.line,
    placeholder: site.source,
  });
}

/**
 * Index just past the quoted string that starts at `start` (a quote character), or -1 when the
 * quote is never closed. A backslash escapes the next character.
 */
export function skipQuoted(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === quote) return i + 1;
    else if (c === '\n') return -1;
  }
  return -1;
}

/** The value of a complete quoted literal (`'it\'s'` gives `it's`). */
function unquote(text: string): string {
  let out = '';
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length - 1) {
      i++;
      out += text[i];
    } else out += c;
  }
  return out;
}

function hintFor(text: string): string {
  if (text.includes('{{') || text.includes('}}'))
    return 'inside a directive or placeholder, write paths without braces: props.x';
  if (text.includes('[')) return `index arrays with dots: 'props.items.0', not 'props.items[0]'`;
  if (text.includes('(')) return 'function calls are not supported';
  if (text.startsWith('!'))
    return 'negation is not supported; use @if(path)...@else, or compare: path == false';
  if (/^[\w.$-]+\s*[+*/%-]\s*[\w.$]+$/.test(text) && !text.includes('://'))
    return 'arithmetic is not supported';
  return `quote literal text, like '${text.replace(/'/g, "\\'")}'`;
}

/** Parses one operand: a quoted literal, a number, `true`, `false`, `null`, or a dotted path. */
export function parseOperand(raw: string, site: ExpressionSite): Operand {
  const text = raw.trim();
  if (text === '') throw syntax('an expression is empty', site);
  const first = text[0]!;
  if (QUOTES.has(first)) {
    if (skipQuoted(text, 0) !== text.length) {
      throw syntax(
        `${text} is not a single quoted literal (unbalanced or trailing text after the quote)`,
        site,
      );
    }
    return { kind: 'literal', value: unquote(text), text };
  }
  if (NUMBER.test(text)) return { kind: 'literal', value: Number(text), text };
  if (text === 'true' || text === 'false') return { kind: 'literal', value: text === 'true', text };
  if (text === 'null') return { kind: 'literal', value: null, text };
  if (PATH.test(text)) return checkPath({ kind: 'path', segments: text.split('.'), text }, site);
  throw syntax(
    `'${text}' is neither a path (props.x, env.NAME, item.field) nor a literal: ${hintFor(text)}`,
    site,
  );
}

function checkPath(path: PathOperand, site: ExpressionSite): PathOperand {
  if (path.segments[0] === 'env' && path.segments.length !== 2) {
    throw syntax(
      path.segments.length === 1
        ? "'env' needs a variable name: env.NAME"
        : `'${path.text}': environment variables are strings and have no fields; use env.${path.segments[1]}`,
      site,
    );
  }
  return path;
}

/**
 * Checks that every path starts at a context root or at a loop variable in scope, so a misspelt
 * root or an unquoted literal (`@if(props.mode == fast)`) fails when the template is parsed.
 */
export function checkRoots(
  operands: readonly Operand[],
  loopVariables: readonly string[],
  site: ExpressionSite,
): void {
  for (const operand of operands) {
    if (operand.kind !== 'path') continue;
    const root = operand.segments[0]!;
    if (CONTEXT_ROOTS.has(root) || loopVariables.includes(root)) continue;
    const inScope = [...new Set(loopVariables)].reverse();
    throw syntax(
      `'${root}' is not defined here: paths start with props., input., env.${
        inScope.length > 0 ? ` or a loop variable (${inScope.join(', ')})` : ''
      }; if '${operand.text}' is meant as text, quote it: '${operand.text}'`,
      site,
    );
  }
}

/** The index after the quoted literal that starts at `i`. @throws TEMPLATE_SYNTAX when it is never closed. */
function endOfQuote(text: string, i: number, site: ExpressionSite): number {
  const end = skipQuoted(text, i);
  if (end < 0) throw syntax(`the quote ${text[i]} is never closed`, site);
  return end;
}

/** Splits `text` on `separator` characters that are outside quotes. */
function splitOutsideQuotes(text: string, separator: string, site: ExpressionSite): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (QUOTES.has(c)) i = endOfQuote(text, i, site) - 1;
    else if (c === separator) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** Parses the inside of a placeholder: `a | b | 'literal'`, left to right. */
export function parseAlternatives(body: string, site: ExpressionSite): Operand[] {
  if (body.trim() === '') throw syntax('the placeholder is empty; write a path such as {{props.name}}', site);
  const parts = splitOutsideQuotes(body, '|', site);
  if (parts.some((p) => p.trim() === '') && parts.length > 1) {
    throw syntax("a fallback alternative is empty (write 'a | b', and '||' is not an operator)", site);
  }
  return parts.map((p) => parseOperand(p, site));
}

const OPERATORS: readonly ComparisonOperator[] = ['==', '!=', '>=', '<=', '>', '<'];
const OPERATOR_START = new Set(['=', '!', '<', '>', '&', '|']);

/** Parses an `@if` / `@elseif` condition: `path`, or `a OP b` with OP one of `== != > < >= <=`. */
export function parseCondition(text: string, site: ExpressionSite): Condition {
  if (text.trim() === '')
    throw syntax('the condition is empty; write @if(props.flag) or @if(props.n > 0)', site);
  let found: { operator: ComparisonOperator; at: number } | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (QUOTES.has(c)) {
      i = endOfQuote(text, i, site) - 1;
      continue;
    }
    if (!OPERATOR_START.has(c)) continue;
    const two = text.slice(i, i + 2);
    if (two === '&&' || two === '||') {
      throw syntax(`'${two}' is not supported; nest @if blocks or use @elseif`, site);
    }
    const operator = OPERATORS.find((op) => text.startsWith(op, i));
    if (operator === undefined) {
      if (c === '=') throw syntax("'=' is not an operator; compare with '=='", site);
      if (c === '!') throw syntax(hintFor('!'), site);
      continue;
    }
    if (found) throw syntax('a condition compares two operands at most (one operator)', site);
    found = { operator, at: i };
    i += operator.length - 1;
  }
  if (!found) return { kind: 'truthy', operand: parseOperand(text, site) };
  const left = text.slice(0, found.at);
  const right = text.slice(found.at + found.operator.length);
  if (left.trim() === '' || right.trim() === '') {
    throw syntax(`'${found.operator}' needs an operand on each side`, site);
  }
  return {
    kind: 'compare',
    operator: found.operator,
    left: parseOperand(left, site),
    right: parseOperand(right, site),
  };
}

function loopVariable(name: string, site: ExpressionSite): string {
  if (!IDENTIFIER.test(name)) throw syntax(`'${name}' is not a valid loop variable name`, site);
  if (CONTEXT_ROOTS.has(name)) {
    throw syntax(`the loop variable cannot be named '${name}' (it would hide the context); rename it`, site);
  }
  return name;
}

const FOR_HEAD = /^\s*(\S+)\s+in\s+range\s*\((.*)\)\s*$/s;
const FOREACH_HEAD = /^\s*(\S+)\s+in\s+(.+?)\s*$/s;

/** Parses `i in range(a, b)`, the head of `@for`. */
export function parseForHead(
  text: string,
  site: ExpressionSite,
): { variable: string; start: Operand; end: Operand } {
  const match = FOR_HEAD.exec(text);
  const bounds = match ? splitOutsideQuotes(match[2]!, ',', site) : [];
  if (!match || bounds.length !== 2) {
    throw syntax('expected @for(variable in range(start, end)), for example @for(i in range(0, 3))', site);
  }
  const start = parseOperand(bounds[0]!, site);
  const end = parseOperand(bounds[1]!, site);
  for (const bound of [start, end]) {
    if (bound.kind === 'literal' && !Number.isInteger(bound.value)) {
      throw syntax(`range bounds are integers or paths, not ${bound.text}`, site);
    }
  }
  return { variable: loopVariable(match[1]!, site), start, end };
}

/** Parses `item in path`, the head of `@foreach`. */
export function parseForeachHead(
  text: string,
  site: ExpressionSite,
): { variable: string; collection: PathOperand } {
  const match = FOREACH_HEAD.exec(text);
  if (!match)
    throw syntax('expected @foreach(variable in path), for example @foreach(item in props.items)', site);
  const collection = parseOperand(match[2]!, site);
  if (collection.kind !== 'path') {
    throw syntax(
      `@foreach iterates over a path such as props.items, not the literal ${collection.text}`,
      site,
    );
  }
  return { variable: loopVariable(match[1]!, site), collection };
}
