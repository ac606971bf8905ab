import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createIntentStream, extractIntents, type Intent } from './index.ts';

/** Runs a document through a stream cut at the given sorted positions. */
function streamed(text: string, cuts: number[]): Intent[] {
  const stream = createIntentStream();
  const out: Intent[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    out.push(...stream.push(text.slice(from, cut)));
    from = cut;
  }
  out.push(...stream.end());
  return out;
}

const fenceChar = fc.constantFrom('`', '~');
const indent = fc.constantFrom('', ' ', '  ', '   ', '    ', '\t');
const info = fc.constantFrom(
  'ts exec=true',
  'js exec',
  'exec="true" id=a',
  'typescript exec=\'true\' title="Load the user"',
  'ts',
  'ts exec=false',
  ' python  exec   timeout=5000 ',
  'ts exec=true `x`',
  'exec&#32;x exec',
  'ts exec=\\"true\\"',
  '',
);
const fenceLine = fc
  .tuple(indent, fenceChar, fc.integer({ min: 2, max: 5 }), info)
  .map(([pad, ch, n, inf]) => `${pad}${ch.repeat(n)}${inf}`);
const closeLine = fc
  .tuple(indent, fenceChar, fc.integer({ min: 2, max: 6 }), fc.constantFrom('', ' ', ' x'))
  .map(([pad, ch, n, tail]) => `${pad}${ch.repeat(n)}${tail}`);
const prose = fc.constantFrom(
  'Some prose.',
  'const x = 1;',
  '',
  ' ',
  '    indented',
  '  two',
  '# Heading',
  '---',
  '===',
  '***',
  '- item',
  '* item',
  '+ item',
  '1. one',
  '2) two',
  '-',
  '1.',
  '> quote',
  '>',
  '> - quoted item',
  '- > item quote',
  '  - nested',
  '<div>',
  '</div>',
  '<!-- c -->',
  '<!--',
  '-->',
  '<pre>',
  '</pre>',
  '<custom a="1">',
  '\tcode',
  '-\tx',
  '>\tx',
  'a\0b',
  '  > x',
  '[ref]: /url',
);
const prefix = fc.constantFrom('', '', '', '> ', '>', '- ', '  ', '   ', '1. ', '> > ', '- > ', '    ', '\t');
const line = fc.tuple(prefix, fc.oneof(fenceLine, closeLine, prose)).map(([p, l]) => p + l);
const ending = fc.constantFrom('\n', '\n', '\n', '\r\n', '\r');
const documentArb = fc.array(fc.tuple(line, ending), { maxLength: 25 }).chain((lines) =>
  fc.boolean().map((last) => {
    const text = lines.map(([l, e]) => l + e).join('');
    return last && lines.length > 0 ? text.slice(0, -lines[lines.length - 1]![1].length) : text;
  }),
);
const cutsFor = (text: string) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 12 })
    .map((c) => c.sort((a, b) => a - b));

describe('streaming equals batch', () => {
  it('for random documents and random chunkings', () => {
    fc.assert(
      fc.property(
        documentArb.chain((text) => fc.tuple(fc.constant(text), cutsFor(text))),
        ([text, cuts]) => {
          expect(streamed(text, cuts)).toEqual(extractIntents(text));
        },
      ),
      { numRuns: Number(process.env.FC_RUNS ?? 3000) },
    );
  });
});
