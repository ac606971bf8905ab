import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeValidationIssues, formatZodIssues } from './index.ts';

const Schema = z.strictObject({
  name: z.string().min(1),
  tools: z.array(z.strictObject({ name: z.string(), kind: z.enum(['a', 'b']) })),
  'odd key': z.number().max(3).optional(),
});
const bad = {
  tools: [
    { name: 'x', kind: 'a' },
    { name: 'y', kind: 'a' },
    { name: 3, kind: 'c', extra: 1 },
  ],
  'odd key': 9,
};

describe('formatZodIssues', () => {
  it('gives {code, message, path} with one path notation (tools[2].name, never tools.2.name)', () => {
    const result = Schema.safeParse(bad, { reportInput: true });
    expect(result.success).toBe(false);
    expect(formatZodIssues(result.error?.issues ?? [])).toEqual([
      { code: 'invalid_type', message: 'required field "name" is missing', path: 'name' },
      { code: 'invalid_type', message: 'expected a string, got number 3', path: 'tools[2].name' },
      { code: 'invalid_value', message: 'invalid kind "c": expected one of "a", "b"', path: 'tools[2].kind' },
      { code: 'unrecognized_keys', message: 'unknown field "extra"', path: 'tools[2].extra' },
      { code: 'too_big', message: 'must be <= 3, got 9', path: '["odd key"]' },
    ]);
  });

  it('says what it can without reportInput (the value is then unknown)', () => {
    const result = Schema.safeParse(bad);
    expect(
      formatZodIssues(result.error?.issues ?? []).map((issue) => `${issue.path}: ${issue.message}`),
    ).toEqual([
      'name: required field "name" is missing',
      'tools[2].name: expected a string',
      'tools[2].kind: invalid kind: expected one of "a", "b"',
      'tools[2].extra: unknown field "extra"',
      '["odd key"]: must be <= 3',
    ]);
  });
});

describe('describeValidationIssues', () => {
  it('joins issues on one line, the root without a path, and counts the ones left out', () => {
    const issues = [
      { code: 'custom', message: 'a value is required', path: '' },
      ...Array.from({ length: 6 }, (_, i) => ({ code: 'too_big', message: 'too big', path: `items[${i}]` })),
    ];
    expect(describeValidationIssues(issues.slice(0, 2))).toBe('a value is required; items[0]: too big');
    expect(describeValidationIssues(issues, 3)).toBe(
      'a value is required; items[0]: too big; items[1]: too big (and 4 more)',
    );
  });
});
