import { describe, expect, it } from 'vitest';
import { ProgramChecker } from './program-checker.ts';

const DTS = `declare function output(value: unknown): void;
interface ToolResult { isError: boolean; content: unknown[] }
declare const tools: { greet(props: { name: string }): Promise<ToolResult> };
interface Skills { save(skill: { name: string; description: string; code: string }): Promise<unknown> }
declare const skills: Skills;`;

describe('ProgramChecker.checkSkill', () => {
  const checker = new ProgramChecker({ dts: DTS, tools: [{ name: 'greet', closed: false }] });

  it('takes the input schema from the parameter type and compiles the module to a function body', () => {
    const report = checker.checkSkill(
      `type Unit = 'c' | 'f';
export default async function convert(input: { degrees: number; unit?: Unit; tags: string[]; meta: { ok: boolean } }) {
  return input.unit === 'f' ? input.degrees * 1.8 + 32 : input.degrees;
}`,
    );
    expect(report.errors).toEqual([]);
    expect(report.inputSchema).toEqual({
      type: 'object',
      properties: {
        degrees: { type: 'number' },
        unit: { enum: ['c', 'f'] },
        tags: { type: 'array', items: { type: 'string' } },
        meta: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
      required: ['degrees', 'tags', 'meta'],
    });
    const exports: { default?: (input: unknown) => Promise<unknown> } = {};
    new Function('exports', report.js!)(exports);
    return expect(exports.default!({ degrees: 100, unit: 'f' })).resolves.toBe(212);
  });

  it('gives an input-less function the empty object schema', () => {
    expect(checker.checkSkill('export default async () => 1;').inputSchema).toEqual({
      type: 'object',
      properties: {},
    });
  });

  it('refuses a module without a default function, with an import, or with a type error', () => {
    expect(checker.checkSkill('export const x = 1;').errors[0]?.message).toMatch(
      /export a function as its default/,
    );
    expect(checker.checkSkill('export default 42;').errors[0]?.message).toMatch(/must be a function/);
    expect(
      checker.checkSkill(`import fs from 'node:fs';\nexport default async () => fs;`).errors[0],
    ).toMatchObject({
      line: 1,
      column: 1,
      message: expect.stringMatching(/import is not available/),
    });
    const typo = checker.checkSkill('export default async () => {\n  await tools.gret({ name: "a" });\n};');
    expect(typo.errors[0]).toMatchObject({
      line: 2,
      column: 15,
      message: expect.stringMatching(/tools\.gret/),
    });
    expect(typo.js).toBeUndefined();
    const dated = checker.checkSkill('export default async (input: { at: Date }) => 1;');
    expect(dated.schemaError?.message).toMatch(/input\.at: the type Date has no JSON Schema/);
    expect(dated.js).toContain('exports.default');
    expect(checker.checkSkill('export default async (n: number) => n;').schemaError?.message).toMatch(
      /must be an object type/,
    );
  });

  it("reads the principal's declarations: its skills type-check, a wrong skill name is caught", () => {
    const principal = 'interface Skills { double(input: { n: number }): Promise<any> }';
    expect(checker.check('return await skills.double({ n: 2 });', 'ts', principal).errors).toEqual([]);
    expect(
      checker.check('return await skills.doubel({ n: 2 });', 'ts', principal).errors[0]?.message,
    ).toMatch(/doubel/);
    expect(checker.check('return await skills.double({ n: 2 });').errors[0]?.message).toMatch(/double/);
  });
});
