import type { z } from 'zod';

/** Formats a zod-style path (`['tools', 2, 'execution']`) as a JSON path (`tools[2].execution`). */
export function formatJsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment)) {
      out += out === '' ? segment : `.${segment}`;
    } else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** A zod issue; `input` is there when the value was parsed with `reportInput: true`. */
export type ZodIssue = z.core.$ZodIssue & { input?: unknown };

/**
 * One problem of a value checked by a zod schema, in the shape of the wire error body's fields.
 * The same for tool files (`SchemaIssue` adds file, line and column), the server's config file and
 * its HTTP and WebSocket request validation.
 */
export interface ValidationIssue {
  /** zod's issue code: `invalid_type`, `unrecognized_keys`, `too_small`, `invalid_value`, ... */
  code: string;
  /** What is wrong, for a person: `required field "name" is missing`, `unknown field "x"`. */
  message: string;
  /** Path of the bad field in JSON-path notation (`tools[2].name`); `''` for the value itself. */
  path: string;
}

/** A {@link ValidationIssue} whose path is still zod's array of keys (to locate it in a source). */
export interface IssuePart {
  code: string;
  path: PropertyKey[];
  message: string;
}

/**
 * Turns zod issues into {@link ValidationIssue}s: one per problem (an `unrecognized_keys` issue
 * gives one per key, at the key's path), with a message a person can act on and the path in one
 * notation, `tools[2].execution.type` (see {@link formatJsonPath}). Messages name the value found when
 * the value was parsed with `reportInput: true`, and say less without it.
 */
export function formatZodIssues(issues: readonly ZodIssue[]): ValidationIssue[] {
  return issues.flatMap(issueParts).map(({ code, path, message }) => ({
    code,
    message,
    path: formatJsonPath(path),
  }));
}

/**
 * One line for a list of issues: `path: message; path: message` (at most `max`, then `(and N
 * more)`); an issue at the root is just its message.
 */
export function describeValidationIssues(issues: readonly ValidationIssue[], max = 5): string {
  const shown = issues
    .slice(0, max)
    .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  const more = issues.length > max ? ` (and ${issues.length - max} more)` : '';
  return shown.join('; ') + more;
}

/**
 * The problems one zod issue stands for (an `unrecognized_keys` issue is one per key), each with a
 * message a person can act on and its path as zod's array of keys.
 */
export function issueParts(issue: ZodIssue): IssuePart[] {
  const { code } = issue;
  const path = [...issue.path];
  const field = path.at(-1);
  const reported = 'input' in issue;
  const part = (message: string, at = path): IssuePart => ({ code, path: at, message });
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => part(`unknown field "${key}"`, [...path, key]));
    case 'invalid_type':
      if (reported ? issue.input === undefined : issue.message.endsWith('received undefined')) {
        return [
          part(field === undefined ? 'a value is required' : `required field "${String(field)}" is missing`),
        ];
      }
      // A custom message (set in the schema) says more than the generic one.
      if (!issue.message.startsWith('Invalid input')) return [part(issue.message)];
      if (!reported) return [part(`expected ${article(issue.expected)}`)];
      return [part(`expected ${article(issue.expected)}, got ${typeName(issue.input)}`)];
    case 'invalid_union':
      return [part(describeUnion(issue, path))];
    case 'invalid_value': {
      const options = issue.values.map((value) => JSON.stringify(value)).join(', ');
      const expected = issue.values.length === 1 ? options : `one of ${options}`;
      if (!reported) return [part(`invalid ${String(field ?? 'value')}: expected ${expected}`)];
      const got = issue.input === undefined ? 'nothing' : JSON.stringify(issue.input);
      return [part(`invalid ${String(field ?? 'value')} ${got}: expected ${expected}`)];
    }
    case 'too_small': {
      if (issue.origin === 'string') {
        return [
          part(
            Number(issue.minimum) <= 1 ? 'must not be empty' : `needs at least ${issue.minimum} characters`,
          ),
        ];
      }
      if (issue.origin === 'array' || issue.origin === 'set') {
        return [part(`needs at least ${issue.minimum} item(s)`)];
      }
      const got = reported ? `, got ${String(issue.input)}` : '';
      return [part(`must be ${issue.inclusive ? '>=' : '>'} ${issue.minimum}${got}`)];
    }
    case 'invalid_key': {
      const [first] = issue.issues;
      return [part(`invalid key ${JSON.stringify(issue.input)}: ${first?.message ?? issue.message}`)];
    }
    case 'too_big': {
      const got = reported ? `, got ${String(issue.input)}` : '';
      return [part(`must be ${issue.inclusive ? '<=' : '<'} ${issue.maximum}${got}`)];
    }
    default:
      return [part(issue.message)];
  }
}

function describeUnion(
  issue: z.core.$ZodIssueInvalidUnion & { input?: unknown },
  path: PropertyKey[],
): string {
  if (issue.discriminator !== undefined) {
    // zod reports a bad discriminator at `<object>.type` with the whole object as input.
    const input = issue.input as Record<string, unknown> | undefined;
    const got = typeof input === 'object' && input !== null ? input[issue.discriminator] : undefined;
    const options = ('options' in issue ? (issue.options ?? []) : []).map(String).join(', ');
    const what = unionNoun(path.slice(0, -1));
    if (!('input' in issue)) return `${what} ${issue.discriminator} must be one of ${options}`;
    if (got === undefined) return `missing "${issue.discriminator}": ${what} type must be one of ${options}`;
    return `unknown ${what} type ${JSON.stringify(got)}: expected one of ${options}`;
  }
  if (!('input' in issue)) return issue.message;
  if (issue.input === undefined) return `required field "${String(path.at(-1))}" is missing`;
  return `expected a JSON value, got ${typeName(issue.input)}`;
}

function unionNoun(objectPath: PropertyKey[]): string {
  const parent = objectPath.at(-1);
  if (objectPath.at(-2) === 'mcp_servers') return 'MCP server';
  if (parent === 'execution') return 'execution';
  if (parent === 'auth') return 'auth';
  if (parent === 'body') return 'body';
  return String(parent ?? 'document');
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'record') return 'an object';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}
