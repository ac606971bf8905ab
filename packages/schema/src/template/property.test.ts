/**
 * Property tests: templates assembled from valid pieces never throw on a context that resolves
 * every path they use, and arbitrary input only ever fails with a TemplateError.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  collectEnvReferences,
  renderStructured,
  renderTemplate,
  type TemplateContext,
  TemplateError,
} from '../index.ts';
import { parse } from './parser.ts';
import { renderNodes } from './render.ts';
import { rootScope } from './scope.ts';

const context: TemplateContext = {
  props: {
    s: 'str',
    n: 4,
    f: 1.5,
    b: true,
    no: false,
    z: null,
    arr: ['a', 'b', 'c'],
    objs: [
      { name: 'x', v: 1 },
      { name: 'y', v: 2 },
    ],
    obj: { k1: 'v1', k2: 2 },
    empty: [],
  },
  env: { A: 'x', N: '3' },
};

/** What a loop variable holds, to know which paths into it resolve. */
type VarKind = 'int' | 'string' | 'named' | 'entry';
interface Var {
  name: string;
  kind: VarKind;
}

const scalarPaths = [
  'props.s',
  'props.n',
  'props.f',
  'props.b',
  'props.no',
  'props.z',
  'props.arr.1',
  'props.objs.0.name',
  'props.obj.k2',
  'input.s',
  'env.A',
  'env.N',
  'props.arr',
  'props.obj',
];
const numericPaths = ['props.n', 'props.f', 'env.N', 'props.objs.1.v', 'props.obj.k2'];
const missingPaths = ['props.missing', 'env.UNSET', 'props.obj.nope', 'props.arr.9'];
const literals = ["'lit'", '`back`', '"dq"', '42', '-1.5', 'true', 'false', 'null', "'a | b'", "''"];

const spaces = fc.constantFrom('', ' ', '  ');
// Text never starts with a word character (`@endifx` is plain text by design) and has no '(' (`@else(` and
// `@else if(` are rejected as misspelt @elseif).
const text = fc.stringMatching(/^(?:[^{@\w$(][^{@(]{0,11})?$/);

function varPaths(vars: readonly Var[]): string[] {
  return vars.flatMap((v) =>
    v.kind === 'int'
      ? [v.name]
      : v.kind === 'string'
        ? [v.name]
        : v.kind === 'named'
          ? [`${v.name}.name`, `${v.name}.v`, v.name]
          : [`${v.name}.key`, `${v.name}.value`],
  );
}

function value(vars: readonly Var[]): fc.Arbitrary<string> {
  return fc.constantFrom(...scalarPaths, ...varPaths(vars));
}

function numeric(vars: readonly Var[]): fc.Arbitrary<string> {
  const ints = vars.filter((v) => v.kind === 'int').map((v) => v.name);
  return fc.oneof(fc.constantFrom(...numericPaths, ...ints), fc.integer({ min: -5, max: 9 }).map(String));
}

/** Integer-valued operands, for range bounds. */
function integer(vars: readonly Var[]): fc.Arbitrary<string> {
  const ints = vars.filter((v) => v.kind === 'int').map((v) => v.name);
  return fc.oneof(
    fc.constantFrom('props.n', 'env.N', 'props.objs.1.v', 'props.obj.k2', ...ints),
    fc.integer({ min: -2, max: 4 }).map(String),
  );
}

function placeholder(vars: readonly Var[]): fc.Arbitrary<string> {
  const resolving = value(vars);
  const chain = fc.tuple(
    fc.array(fc.constantFrom(...missingPaths), { maxLength: 2 }),
    fc.oneof(resolving, fc.constantFrom(...literals)),
  );
  return fc
    .tuple(spaces, chain, spaces, fc.constantFrom(' | ', '|'))
    .map(([before, [misses, last], after, sep]) => `{{${before}${[...misses, last].join(sep)}${after}}}`);
}

function condition(vars: readonly Var[]): fc.Arbitrary<string> {
  const any = fc.oneof(value(vars), fc.constantFrom(...missingPaths));
  return fc.oneof(
    any,
    fc
      .tuple(any, fc.constantFrom('==', '!='), fc.oneof(any, fc.constantFrom(...literals)))
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    fc
      .tuple(numeric(vars), fc.constantFrom('>', '<', '>=', '<='), numeric(vars))
      .map(([a, op, b]) => `${a}${op}${b}`),
  );
}

/** Separates a directive from what follows: alone on its line, or inline. */
const gap = fc.constantFrom('', '\n', ' ', '\r\n');

function template(depth: number, vars: readonly Var[]): fc.Arbitrary<string> {
  const leaf = fc.oneof(text, placeholder(vars));
  if (depth === 0) return fc.array(leaf, { maxLength: 4 }).map((parts) => parts.join(''));
  const inner = (extra?: Var) => template(depth - 1, extra ? [...vars, extra] : vars);
  const name = `v${depth}`;
  const ifBlock = fc
    .tuple(
      condition(vars),
      gap,
      inner(),
      fc.option(fc.tuple(condition(vars), inner())),
      fc.option(inner()),
      gap,
    )
    .map(
      ([cond, g, body, elseif, otherwise, g2]) =>
        `@if(${cond})${g}${body}${elseif ? `@elseif(${elseif[0]})${g}${elseif[1]}` : ''}${otherwise !== null ? `@else${g}${otherwise}` : ''}@endif${g2}`,
    );
  const forBlock = fc
    .tuple(integer(vars), integer(vars), gap, inner({ name, kind: 'int' }), gap)
    .map(([from, to, g, body, g2]) => `@for(${name} in range(${from}, ${to}))${g}${body}@endfor${g2}`);
  const foreachBlock = fc
    .constantFrom<[string, VarKind]>(
      ['props.arr', 'string'],
      ['props.objs', 'named'],
      ['props.obj', 'entry'],
      ['props.empty', 'string'],
    )
    .chain(([collection, kind]) =>
      fc
        .tuple(gap, inner({ name, kind }), gap)
        .map(([g, body, g2]) => `@foreach(${name} in ${collection})${g}${body}@endforeach${g2}`),
    );
  return fc
    .array(fc.oneof(leaf, ifBlock, forBlock, foreachBlock), { maxLength: 4 })
    .map((parts) => parts.join(''));
}

describe('template properties', () => {
  it('templates built from valid pieces never throw on a context that resolves their paths', () => {
    fc.assert(
      fc.property(template(3, []), (source) => {
        const out = renderTemplate(source, context);
        expect(typeof out).toBe('string');
        // The cached tree renders exactly like a fresh parse.
        expect(renderNodes(parse(source), rootScope(context), { iterations: 0 })).toBe(out);
        collectEnvReferences(source);
      }),
      { numRuns: 500 },
    );
  });

  it('text without braces or at signs renders as itself', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('{') && !s.includes('@')),
        (source) => {
          expect(renderTemplate(source, context)).toBe(source);
        },
      ),
    );
  });

  it('any input either renders or throws a TemplateError (never another error)', () => {
    const alphabet = fc.constantFrom(
      ...'{}@!()|\'"`.=<> \n\tab01-_'.split(''),
      '{{',
      '}}',
      '{!!',
      '!!}',
      '@if(',
      '@elseif(',
      '@else',
      '@endif',
      '@for(',
      '@endfor',
      '@foreach(',
      '@endforeach',
      ' in range(',
      ' in ',
      'props.',
      'env.',
      'props.arr',
      'props.n',
      'i',
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 30 }), (parts) => {
        const source = parts.join('');
        try {
          renderTemplate(source, context);
          renderStructured({ a: source, b: [source] }, context);
        } catch (error) {
          if (!(error instanceof TemplateError)) throw error;
          expect(error.code).toMatch(/^TEMPLATE_(SYNTAX|UNRESOLVED|TYPE|LIMIT)$/);
          if (error.code === 'TEMPLATE_SYNTAX') expect(error.line).toBeGreaterThanOrEqual(1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('renderStructured never changes its input', () => {
    const json = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom('{{props.s}}', '{!!props.arr!!}', 'plain', '@if(props.b)y@endif', 7, null, true),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 3 }), tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(json, (input) => {
        const before = JSON.stringify(input);
        renderStructured(input, context);
        expect(JSON.stringify(input)).toBe(before);
      }),
    );
  });
});
