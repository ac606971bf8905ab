import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../src/extract-intents.ts';
import { extractIntents } from '../src/index.ts';
import { everyNth, streamed, streamedFencedBlocks } from './fenced-blocks.ts';

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
  'ts exec a\u2028`b',
  'ts exec\u00a0x',
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
  "[ref]: /url 'multi",
  "line title'",
  '[ref]:',
  '<script>',
  '</script>',
  '<?php',
  '?>',
  '<![CDATA[',
  ']]>',
  '<!DOCTYPE html>',
  '<div/>',
  '0. zero',
  'ünïcode\u00a0nbsp\u2028sep',
  '\u00a0   x',
  '  \t',
);
const prefixPart = fc.constantFrom(
  '> ',
  '>',
  '- ',
  '* ',
  '  ',
  '   ',
  ' ',
  '1. ',
  '2) ',
  '10. ',
  '    ',
  '\t',
  '>\t',
  '-\t',
  ' > ',
  '-     ',
  '1.      ',
  '*\t\t',
  '  \t',
  '> \t',
  '123456789. ',
  '1234567890. ',
  '-\u00a0',
);
const prefix = fc.array(prefixPart, { maxLength: 3 }).map((parts) => parts.join(''));
const inline = fc.constantFrom('use `code` here', '``a``', 'a ``` b', '&amp; \\`', 'x ~~~ y', '<span>');
const line = fc
  .tuple(
    prefix,
    fc.oneof(
      { weight: 2, arbitrary: fenceLine },
      { weight: 2, arbitrary: closeLine },
      { weight: 4, arbitrary: prose },
      inline,
    ),
  )
  .map(([p, l]) => p + l);
const ending = fc.constantFrom('\n', '\n', '\n', '\r\n', '\r');
const documentArb = fc
  .array(fc.tuple(line, ending), { maxLength: Number(process.env.FC_LINES ?? 25) })
  .chain((lines) =>
    fc.boolean().map((last) => {
      const text = lines.map(([l, e]) => l + e).join('');
      return last && lines.length > 0 ? text.slice(0, -lines[lines.length - 1]![1].length) : text;
    }),
  );
const cutsFor = (text: string) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 12 })
    .map((c) => c.sort((a, b) => a - b));

const runs = Number(process.env.FC_RUNS ?? 2000);
// remark-parse is slow (a few hundred KB/s); give a loaded CI machine room.
const timeout = Math.max(120_000, runs * 20);

/** Runs `check` on `runs` texts drawn from `texts`, each with random cut points. */
function forEveryChunking(texts: fc.Arbitrary<string>, check: (text: string, cuts: number[]) => void): void {
  fc.assert(
    fc.property(
      texts.chain((text) => fc.tuple(fc.constant(text), cutsFor(text))),
      ([text, cuts]) => check(text, cuts),
    ),
    { numRuns: runs },
  );
}

// Character soup: markdown punctuation, spaces, tabs and line endings in any order.
const soup = fc
  .array(
    fc.constantFrom(
      ' ',
      ' ',
      '\t',
      '\n',
      '\n',
      '\r',
      '\r\n',
      '>',
      '-',
      '*',
      '+',
      '1',
      '.',
      ')',
      '`',
      '```',
      '~~~',
      '<',
      'div',
      '!--',
      '#',
      '=',
      '_',
      '[',
      ']',
      ':',
      'a',
      ' exec',
      '\\',
      '&',
      ';',
      '<pre',
      '</pre>',
      '-->',
      '<?',
      '?>',
      '    ',
      '\u00a0',
      '0',
      '9',
      ' x="1 2"',
      "'",
      '&amp;',
    ),
    { maxLength: 200 },
  )
  .map((parts) => parts.join(''));

describe('streaming equals batch', () => {
  it.each([
    ['character soup', soup],
    ['random documents', documentArb],
  ])(
    'every fenced block (exec or not) is the same for %s and random chunkings',
    (_, texts) => {
      forEveryChunking(texts, (text, cuts) => {
        expect(streamedFencedBlocks(text, cuts)).toEqual(fencedBlocks(text));
      });
    },
    timeout,
  );

  it(
    'for random documents and random chunkings',
    () => {
      forEveryChunking(documentArb, (text, cuts) => {
        expect(streamed(text, cuts)).toEqual(extractIntents(text));
      });
    },
    timeout,
  );

  it('agrees on documents the properties once found to differ (an empty list item ended by blank lines)', () => {
    // micromark keeps an empty list item open across blank lines, so the next line is lazy: indented
    // code there ends with its line and does not stop an ordered list starting at 2.
    const documents = [
      '1.\n\n     Some prose.\n2) ```ts exec=true\n',
      '1.\n\n\n     x\n2) ```ts\n',
      '-\n\n    x\n2. a\n3. ```\n',
      '- a\n-\n\n    x\n2) ```ts\n',
      '1.\n\n     x\n> 2. ```ts\n',
      '> -\n>\n>     x\n> 2) ```ts\n',
      '> -\n\n    x\n2) ```ts\n',
      '-\n\n    x\n    y\n2. ```ts\n',
      '    x\n2) ```ts\n',
    ];
    for (const text of documents) {
      for (const cuts of [[], everyNth(text, 1), everyNth(text, 3)]) {
        expect(streamedFencedBlocks(text, cuts)).toEqual(fencedBlocks(text));
      }
    }
  });
});
