/**
 * Evaluation of `@if` / `@elseif` conditions.
 *
 * - A truthy check is false for a missing path, `undefined`, `null`, `false`, `0`, `NaN`, `''`, an
 *   empty array and an empty object, and true otherwise (the MCI reference's Python semantics).
 * - `==` / `!=` compare by value (arrays and objects deeply); a missing path equals `null`; a string
 *   compared with a number or a boolean is compared with its text form, because environment
 *   variables are always strings (`env.RETRIES == 3` holds when RETRIES is "3").
 * - `>` `<` `>=` `<=` compare numbers; a string that is a plain decimal number counts as that number.
 *   Anything else is a `TEMPLATE_TYPE` error (a missing path is `TEMPLATE_UNRESOLVED`).
 * @see MCI schema reference, "Conditional Blocks"
 */
import { isDeepStrictEqual } from 'node:util';
import type { Condition, IfBranch, Operand } from './ast.ts';
import { describeValue, explainMissing, MISSING, resolvePath, type Scope } from './scope.ts';
import { TemplateError } from './template-error.ts';

const NUMERIC = /^\s*-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*$/;

/** The value of an operand, or {@link MISSING}. */
export function operandValue(operand: Operand, scope: Scope): unknown {
  return operand.kind === 'literal' ? operand.value : resolvePath(operand, scope);
}

/** Truthiness as a template sees it (see the module comment). */
export function isTruthy(value: unknown): boolean {
  if (value === MISSING || value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

function looseEquals(a: unknown, b: unknown): boolean {
  const left = a === MISSING || a === undefined ? null : a;
  const right = b === MISSING || b === undefined ? null : b;
  if (left === right) return true;
  if (typeof left === 'string' && (typeof right === 'number' || typeof right === 'boolean'))
    return left === String(right);
  if (typeof right === 'string' && (typeof left === 'number' || typeof left === 'boolean'))
    return right === String(left);
  if (typeof left === 'object' && typeof right === 'object') return isDeepStrictEqual(left, right);
  return false;
}

/** A number, or a string holding a plain decimal number; otherwise undefined. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  if (typeof value === 'string' && NUMERIC.test(value)) return Number(value);
  return undefined;
}

function orderOperand(
  operand: Operand,
  value: unknown,
  operator: string,
  scope: Scope,
  branch: IfBranch,
): number {
  const site = { line: branch.line, placeholder: branch.source };
  if (value === MISSING && operand.kind === 'path') {
    throw new TemplateError(
      'TEMPLATE_UNRESOLVED',
      `'${branch.source}': ${explainMissing(operand, scope)}; '${operator}' needs a number on each side (guard it with an outer @if(${operand.text}))`,
      site,
    );
  }
  const number = asNumber(value);
  if (number === undefined) {
    throw new TemplateError(
      'TEMPLATE_TYPE',
      `'${branch.source}': '${operator}' compares numbers, but ${operand.text} is ${describeValue(value, operand)}; use == or != for other values`,
      site,
    );
  }
  return number;
}

/** Whether `branch`'s condition holds in `scope`. Throws `TEMPLATE_TYPE` / `TEMPLATE_UNRESOLVED` for bad orderings. */
export function conditionHolds(branch: IfBranch, scope: Scope): boolean {
  const condition: Condition = branch.condition;
  if (condition.kind === 'truthy') return isTruthy(operandValue(condition.operand, scope));
  const { operator, left, right } = condition;
  const a = operandValue(left, scope);
  const b = operandValue(right, scope);
  switch (operator) {
    case '==':
      return looseEquals(a, b);
    case '!=':
      return !looseEquals(a, b);
  }
  const x = orderOperand(left, a, operator, scope, branch);
  const y = orderOperand(right, b, operator, scope, branch);
  switch (operator) {
    case '>':
      return x > y;
    case '<':
      return x < y;
    case '>=':
      return x >= y;
    default:
      return x <= y;
  }
}
