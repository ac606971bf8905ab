import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createIntentStream, extractIntents, type Intent, IntentExtractorError } from '../src/index.ts';

/** Pushes `text` one UTF-16 unit at a time; returns each intent with the index of the push that emitted it (-1: end). */
function emissions(text: string): { intent: Intent; at: number }[] {
  const stream = createIntentStream();
  const out: { intent: Intent; at: number }[] = [];
  for (let i = 0; i < text.length; i++)
    for (const intent of stream.push(text[i]!)) out.push({ intent, at: i });
  for (const intent of stream.end()) out.push({ intent, at: -1 });
  return out;
}

/** Offset of the line ending that ends 1-based `line`, or -1 when the line runs to the end of the text. */
function lineEndOffset(text: string, line: number): number {
  let current = 1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code !== 10 && code !== 13) continue;
    if (current === line) return i;
    if (code === 13 && text.charCodeAt(i + 1) === 10) i++;
    current++;
  }
  return -1;
}

describe('createIntentStream', () => {
  it('emits an intent exactly when the line ending after its closing fence arrives', () => {
    const text = 'Intro\n```ts exec=true\nrun();\n```\nmore text\n';
    const closingEnd = text.indexOf('```\n', 10) + 3;
    expect(emissions(text).map(({ intent, at }) => [intent.code, intent.closed, at])).toEqual([
      ['run();', true, closingEnd],
    ]);
  });

  it('emits a closed block whose closing fence ends the stream from end(), and unclosed blocks with closed: false', () => {
    expect(emissions('```ts exec\na\n```').map(({ intent, at }) => [intent.closed, at])).toEqual([
      [true, -1],
    ]);
    const stream = createIntentStream();
    expect(stream.push('```ts exec\nhalf(\n')).toEqual([]);
    expect(stream.end()).toEqual([
      expect.objectContaining({ code: 'half(', closed: false, startLine: 1, endLine: 2 }),
    ]);
  });

  it('treats \\r as a line ending at once and a \\n in the next chunk as part of it', () => {
    const stream = createIntentStream();
    expect(stream.push('```ts exec\r')).toEqual([]);
    expect(stream.push('\na\r')).toEqual([]);
    expect(stream.push('\nb\r')).toEqual([]);
    expect(stream.push('\n```\r')).toEqual([
      expect.objectContaining({ code: 'a\r\nb', startLine: 1, endLine: 4 }),
    ]);
    expect(stream.push('\n')).toEqual([]);
    expect(stream.end()).toEqual([]);
  });

  it('joins a surrogate pair split across chunks and drops a leading byte order mark', () => {
    const text = '\uFEFF```ts exec\nconst s = "😀";\n```\n';
    const split = text.indexOf('😀') + 1;
    const stream = createIntentStream();
    const out = [...stream.push(text.slice(0, split)), ...stream.push(text.slice(split)), ...stream.end()];
    expect(out.map((i) => [i.code, i.startLine])).toEqual([['const s = "😀";', 1]]);
    expect(out).toEqual(extractIntents(text));
  });

  it('emits the block of a list item when the line that ends the item arrives, unclosed', () => {
    const text = '- ```ts exec\n  a\nnext paragraph\n';
    const at = text.indexOf('\n', text.indexOf('next'));
    expect(emissions(text).map(({ intent, at }) => [intent.closed, at])).toEqual([[false, at]]);
  });

  it('never emits early or twice, for random documents fed one character at a time', () => {
    const line = fc.constantFrom(
      '```ts exec',
      '```',
      '~~~js exec=true',
      '~~~',
      'code();',
      '',
      '> ```ts exec',
      '> x',
      '> ```',
      '- item',
      '  ```ts exec',
      '  y',
      '  ```',
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 16 }), fc.constantFrom('\n', '\r\n', '\r'), (lines, eol) => {
        const text = lines.join(eol);
        const seen = emissions(text);
        expect(seen.map((e) => e.intent)).toEqual(extractIntents(text));
        for (const { intent, at } of seen) {
          if (!intent.closed) continue;
          expect(at).toBe(lineEndOffset(text, intent.endLine));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('refuses non-string chunks and use after end()', () => {
    const stream = createIntentStream();
    expect(() => stream.push(1 as unknown as string)).toThrow(IntentExtractorError);
    stream.end();
    expect(() => stream.push('x')).toThrow(expect.objectContaining({ code: 'STREAM_ENDED' }));
    expect(() => stream.end()).toThrow(expect.objectContaining({ code: 'STREAM_ENDED' }));
  });
});
