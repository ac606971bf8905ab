import type { z } from 'zod';
import { formatJsonPath, type SchemaIssue } from './schema-error.ts';
import type { SourceDocument } from './source-document.ts';

type ZodIssue = z.core.$ZodIssue & { input?: unknown };

/**
 * Turns zod issues (parsed with `reportInput: true`) into schema issues with a JSON path, a message
 * a person can act on, and the line/column of the field in `source`.
 */
export function toSchemaIssues(
  issues: readonly ZodIssue[],
  file: string,
  source: SourceDocument,
): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const issue of issues) {
    for (const { path, message } of describe(issue)) {
      out.push({ file, path: formatJsonPath(path), message, ...source.locate(path) });
    }
  }
  // zod reports in schema order; a reader goes down the file.
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

function describe(issue: ZodIssue): { path: PropertyKey[]; message: string }[] {
  const path = [...issue.path];
  const field = path.at(-1);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...path, key], message: `unknown field "${key}"` }));
    case 'invalid_type':
      if (issue.input === undefined)
        return [{ path, message: `required field "${String(field)}" is missing` }];
      // A custom message (set in the schema) says more than the generic one.
      if (!issue.message.startsWith('Invalid input')) return [{ path, message: issue.message }];
      return [{ path, message: `expected ${article(issue.expected)}, got ${typeName(issue.input)}` }];
    case 'invalid_union':
      return [{ path, message: describeUnion(issue, path) }];
    case 'invalid_value': {
      const options = issue.values.map((value) => JSON.stringify(value)).join(', ');
      const got = issue.input === undefined ? 'nothing' : JSON.stringify(issue.input);
      const expected = issue.values.length === 1 ? options : `one of ${options}`;
      return [{ path, message: `invalid ${String(field)} ${got}: expected ${expected}` }];
    }
    case 'too_small':
      if (issue.origin === 'string') return [{ path, message: 'must not be empty' }];
      if (issue.origin === 'array' || issue.origin === 'set') {
        return [{ path, message: `needs at least ${issue.minimum} item(s)` }];
      }
      return [
        {
          path,
          message: `must be ${issue.inclusive ? '>=' : '>'} ${issue.minimum}, got ${String(issue.input)}`,
        },
      ];
    case 'invalid_key': {
      const [first] = issue.issues;
      return [
        { path, message: `invalid key ${JSON.stringify(issue.input)}: ${first?.message ?? issue.message}` },
      ];
    }
    case 'too_big':
      return [
        {
          path,
          message: `must be ${issue.inclusive ? '<=' : '<'} ${issue.maximum}, got ${String(issue.input)}`,
        },
      ];
    default:
      return [{ path, message: issue.message }];
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
    if (got === undefined) return `missing "${issue.discriminator}": ${what} type must be one of ${options}`;
    return `unknown ${what} type ${JSON.stringify(got)}: expected one of ${options}`;
  }
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
