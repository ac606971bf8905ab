import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanStack, prepareSource, toExecutionError } from './transpile.ts';

const CONFIG = { tools: ['a'] };

describe('prepareSource', () => {
  it('puts the wrapper on a line of its own and keeps the code on its own lines', () => {
    const { source, filename } = prepareSource('output(1)\nreturn 2', 'js', CONFIG);
    expect(filename).toBe('snippet.js');
    expect(source.split('\n')).toEqual([
      `__mci_run__({"tools":["a"]}, async function () { 'use strict';`,
      'output(1)',
      'return 2',
      '})',
    ]);
  });

  // Strip-only mode must blank types without moving anything: every error position depends on it.
  it('keeps every character of TypeScript code in place (types become spaces)', () => {
    const piece = fc.constantFrom(
      'let a: number = 1;',
      'function f<T extends object>(x: T, y?: string): T { return x }',
      'type X = { a: string; b?: number[] };',
      'interface I { a: number; m(): void }',
      'const b = (a as unknown) as number;',
      'const c = [1, 2] as const;',
      'class K implements I { a: number = 1; private p!: string; m(): void {} }',
      'declare const d: string;',
      'const e = f<number>(1 as any);',
      'output(x satisfies unknown);',
    );
    const layout = fc.constantFrom('\n', '\n\n', ' ', '  \n  ', '\t');
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, layout), { maxLength: 12 }), (parts) => {
        const code = parts.map(([p, l]) => p + l).join('');
        const ts = prepareSource(code, 'ts', CONFIG).source;
        const js = prepareSource(code, 'js', CONFIG).source;
        expect(ts.length).toBe(js.length);
        for (let i = 0; i < js.length; i++) {
          if (ts[i] !== js[i]) expect([' ', '\n'].includes(ts[i]!) && js[i] !== '\n', `at ${i}`).toBe(true);
        }
      }),
    );
  });

  it('reports TypeScript that needs a transform, with line and column in the submitted code', () => {
    expect(() => prepareSource('const x = 1;\n  namespace N { export const a = 1 }', 'ts', CONFIG)).toThrow(
      expect.objectContaining({ name: 'SyntaxError', line: 2, column: 3 }),
    );
  });

  it('explains import/export', () => {
    expect(() => prepareSource('import x from "y"', 'ts', CONFIG)).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^import\/export are not available in the sandbox/),
      }),
    );
  });
});

describe('toExecutionError', () => {
  it("reads isolated-vm's [file:line:column] suffix and drops it from the message", () => {
    expect(
      toExecutionError(
        { name: 'SyntaxError', message: "Unexpected identifier 'b' [snippet.ts:3:7]" },
        'snippet.ts',
      ),
    ).toEqual({
      name: 'SyntaxError',
      message: "Unexpected identifier 'b'",
      line: 3,
      column: 7,
    });
  });

  it('reads the first frame in the snippet and keeps only the program frames', () => {
    const stack = [
      'TypeError: x is not a function',
      '    at helper (mci:bootstrap:10:3)',
      '    at inner (snippet.ts:4:9)',
      '    at snippet.ts:7:1',
      '    at snippet.ts',
      '    at start (file:///work/main/packages/sandbox/src/worker/worker-execution.ts:74:38)',
    ].join('\n');
    expect(
      toExecutionError({ name: 'TypeError', message: 'x is not a function', stack }, 'snippet.ts'),
    ).toEqual({
      name: 'TypeError',
      message: 'x is not a function',
      line: 4,
      column: 9,
      stack: 'TypeError: x is not a function\n    at inner (snippet.ts:4:9)\n    at snippet.ts:7:1',
    });
  });

  it('copes with values that are not errors', () => {
    expect(toExecutionError({ message: 42 }, 'snippet.ts')).toEqual({ name: 'Error', message: '42' });
    expect(cleanStack('Error: x', 'snippet.js')).toBe('Error: x');
  });
});
