import { afterAll, describe, expect, it } from 'vitest';
import { CheckError, createChecker } from './checker.ts';
import { ProgramChecker } from './program-checker.ts';

const DTS = `declare function output(value: unknown): void;
interface ToolResult { isError: boolean; content: unknown[] }
declare const tools: {
  greet(props: { name: string; loud?: boolean }): Promise<ToolResult>;
  strict(props: { a: string; b?: number }): Promise<ToolResult>;
  "kebab-tool"(props?: Record<string, unknown>): Promise<ToolResult>;
};`;
const declarations = {
  dts: DTS,
  tools: [
    { name: 'greet', closed: false },
    { name: 'strict', closed: true },
    { name: 'kebab-tool', closed: false },
  ],
};

describe('ProgramChecker', () => {
  const checker = new ProgramChecker(declarations);
  const errors = (code: string, lang?: 'ts' | 'js') => checker.check(code, lang).errors;

  it('passes a correct program with no findings', () => {
    const report = checker.check(
      `const r = await tools.greet({ name: 'a' });\noutput(r.content);\nreturn 1;`,
    );
    expect(report).toMatchObject({ errors: [], warnings: [] });
  });

  it('blocks a tool that does not exist, with the tool TypeScript suggests', () => {
    expect(errors(`const x = 1;\n\nawait tools.gret({ name: 'a' });`)).toEqual([
      { line: 3, column: 13, code: 2551, message: 'tools.gret does not exist. Did you mean tools.greet?' },
    ]);
    expect(errors(`await tools.nothing();`)[0]).toMatchObject({
      code: 2339,
      message: expect.stringMatching(/^tools\.nothing does not exist/),
    });
    expect(errors(`await tools['kebab-tol']();`)).toHaveLength(0);
  });

  it('blocks a missing required input property, or a missing input', () => {
    expect(errors(`await tools.greet({ loud: true });`)).toMatchObject([
      { line: 1, code: 2345, message: "tools.greet: input property 'name' is required." },
    ]);
    expect(errors(`await tools.greet();`)[0]?.message).toMatch(/^tools\.greet: its input is required/);
    expect(errors(`const props = { loud: true };\nawait tools.greet(props);`)).toHaveLength(1);
  });

  it('blocks an extra property only where the input schema forbids extra properties', () => {
    expect(errors(`await tools.strict({ a: 'x', c: 1 });`)).toMatchObject([
      { code: 2353, message: "tools.strict: input property 'c' is not in its input schema." },
    ]);
    expect(errors(`await tools.strict({ A: 'x' });`)[0]?.message).toBe(
      "tools.strict: input property 'A' is not in its input schema. Did you mean 'a'?",
    );
    const open = checker.check(`await tools.greet({ name: 'x', extra: 1 });`);
    expect(open.errors).toEqual([]);
    expect(open.warnings).toMatchObject([{ code: 2353 }]);
  });

  it('blocks syntax errors and misspelt names, and warns about the rest', () => {
    expect(errors(`const x = ;`)).toMatchObject([{ line: 1, column: 11, code: 1109 }]);
    expect(errors(`ouput(1);`)).toMatchObject([
      { code: 2552, message: "Cannot find name 'ouput'. Did you mean 'output'?" },
    ]);
    expect(errors(`[1].fnd((x) => x);`)).toMatchObject([{ code: 2551 }]);
    const typeError = checker.check(`const n: number = 'x';\nreturn n;`);
    expect(typeError.errors).toEqual([]);
    expect(typeError.warnings).toMatchObject([{ line: 1, column: 7, code: 2322 }]);
  });

  it('reads JavaScript too, and positions past the end stay inside the code', () => {
    expect(errors(`await tools.gret({});`, 'js')).toMatchObject([{ code: 2551 }]);
    expect(errors(`if (true) {\n  output(1);`)).toMatchObject([{ line: 2, code: 1005 }]);
    expect(errors(`return 1; }\n}`)[0]).toMatchObject({ line: 2, column: 1 });
  });

  it('checks against new declarations once they are set', () => {
    const local = new ProgramChecker(declarations);
    expect(local.check(`await tools.wave({});`).errors).toHaveLength(1);
    local.setDeclarations({
      dts: 'declare const tools: { wave(props: {}): Promise<unknown> };',
      tools: [{ name: 'wave', closed: false }],
    });
    expect(local.check(`await tools.wave({});`).errors).toEqual([]);
  });
});

describe('createChecker', () => {
  const checker = createChecker({ declarations });
  afterAll(() => checker.close());

  it('checks in a worker thread, one report per program, in any order of arrival', async () => {
    const reports = await Promise.all([
      checker.check(`await tools.greet({ name: 'a' });`),
      checker.check(`await tools.gret({ name: 'a' });`),
      checker.check(`output(1)`, 'js'),
    ]);
    expect(reports.map((r) => r.errors.length)).toEqual([0, 1, 0]);
    expect(reports[0]!.durationMs).toBeGreaterThan(0);
  });

  it('rejects with CHECK_TIMEOUT and serves the next check from a fresh worker', async () => {
    const slow = createChecker({ declarations, timeoutMs: 1 });
    await expect(slow.check(`output(1);`)).rejects.toMatchObject({ code: 'CHECK_TIMEOUT' });
    await slow.close();
    await expect(slow.check('')).rejects.toBeInstanceOf(CheckError);
    await expect(checker.check(`output(2);`)).resolves.toMatchObject({ errors: [] });
  });
});
