/** Longest skill name, in characters. */
export const MAX_SKILL_NAME_LENGTH = 64;

/** Names `skills` itself has, or that every object has: a skill cannot take them. */
const RESERVED = new Set([
  'save',
  'list',
  'get',
  'delete',
  'describe',
  'search',
  'then',
  'toJSON',
  'constructor',
  'inspect',
  'valueOf',
  'toString',
  'prototype',
  '__proto__',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
]);

/** Words JavaScript reserves (a skill name is an identifier a program writes as `skills.name`). */
const KEYWORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false ' +
    'finally for function if import in instanceof new null return super switch this throw true try ' +
    'typeof var void while with yield let static implements interface package private protected public await'
  ).split(' '),
);

/**
 * Why `name` cannot name a skill, or `undefined` when it can: a skill name is an ASCII JavaScript
 * identifier (`[A-Za-z_$][A-Za-z0-9_$]*`, at most {@link MAX_SKILL_NAME_LENGTH} characters), not a
 * keyword, and none of the names `skills` has itself (`save`, `list`...) or every object has
 * (`constructor`, `toString`, `then`...).
 */
export function skillNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > MAX_SKILL_NAME_LENGTH)
    return `a skill name has 1 to ${MAX_SKILL_NAME_LENGTH} characters`;
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name))
    return `${JSON.stringify(name)} is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit)`;
  if (KEYWORDS.has(name)) return `${name} is a JavaScript keyword`;
  if (RESERVED.has(name)) return `${name} is reserved (skills.${name} has another meaning)`;
  return undefined;
}
