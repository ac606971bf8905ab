import { tests } from 'commonmark-spec';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../src/extract-intents.ts';
import { createIntentStream, extractIntents, type Intent } from '../src/index.ts';
import { everyNth, streamed, streamedFencedBlocks } from './fenced-blocks.ts';

// The spec writes tabs as `→`.
const examples = tests
  .map((example) => ({ ...example, markdown: example.markdown.replace(/→/g, '\t') }))
  .filter((example) => example.section === 'Fenced code blocks' || /```|~~~/.test(example.markdown));

/** Appends ` _ exec` (a flag after any language) to the opening line of every fenced block (as remark finds them): all become intents. */
function withExec(markdown: string): string {
  const lines = markdown.split('\n');
  for (const block of fencedBlocks(markdown)) lines[block.startLine - 1] += ' _ exec';
  return lines.join('\n');
}

describe('CommonMark spec examples with a fence', () => {
  it('selects the fenced code block section and every example with a fence', () => {
    expect(examples.length).toBeGreaterThan(40);
    const intents = examples.flatMap((example) => extractIntents(withExec(example.markdown)));
    expect(intents.length).toBe(examples.flatMap((example) => fencedBlocks(example.markdown)).length);
  });

  it.each(examples.map((e) => [e.number, e.section, e.markdown]))(
    'example %i (%s): streamed fenced blocks equal remark for every chunk size',
    (_number, _section, markdown) => {
      const expected = fencedBlocks(markdown);
      for (const size of [1, 2, 3, 4, 7, markdown.length || 1]) {
        expect(streamedFencedBlocks(markdown, everyNth(markdown, size))).toEqual(expected);
      }
      const crlf = markdown.replace(/\n/g, '\r\n');
      expect(streamedFencedBlocks(crlf, everyNth(crlf, 1))).toEqual(fencedBlocks(crlf));
    },
  );

  it.each(examples.map((e) => [e.number, withExec(e.markdown)]))(
    'example %i with exec attributes: streamed intents equal extractIntents for random chunkings',
    (_number, markdown) => {
      const expected = extractIntents(markdown);
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 0, max: markdown.length }), { maxLength: 8 }),
          (cuts) => {
            expect(
              streamed(
                markdown,
                cuts.sort((a, b) => a - b),
              ),
            ).toEqual(expected);
          },
        ),
        { numRuns: 30 },
      );
    },
  );
});
