import { describe, expect, it } from 'vitest';
import { createIntentStream, extractIntents, IntentExtractorError } from '../src/index.ts';

const codes = (markdown: string) => extractIntents(markdown).map((intent) => intent.code);

describe('extractIntents', () => {
  it('extracts the exec block of a chat answer with every field', () => {
    const markdown = [
      'Let me fetch the user.',
      '',
      '```ts exec=true id=fetch-user timeout=5000 title="Load the user"',
      'const res = await fetch("https://api.example.com/users/1");',
      'output(res.json());',
      '```',
      '',
      'Done.',
    ].join('\n');
    expect(extractIntents(markdown)).toEqual([
      {
        index: 0,
        lang: 'ts',
        code: 'const res = await fetch("https://api.example.com/users/1");\noutput(res.json());',
        attributes: { exec: true, id: 'fetch-user', timeout: '5000', title: 'Load the user' },
        info: 'ts exec=true id=fetch-user timeout=5000 title="Load the user"',
        startLine: 3,
        endLine: 6,
        closed: true,
      },
    ]);
  });

  it('ignores blocks without exec=true, inline code and indented code, and counts only exec intents', () => {
    const markdown = [
      '```ts',
      'notRun();',
      '```',
      'Inline ```ts exec=true x``` code.',
      '',
      '    ```ts exec=true',
      '    indented();',
      '    ```',
      '',
      '~~~js exec',
      'a();',
      '~~~',
      '```js exec=false',
      'no();',
      '```',
      '```typescript exec="true"',
      'b();',
      '```',
    ].join('\n');
    const intents = extractIntents(markdown);
    expect(intents.map((i) => [i.index, i.lang, i.code, i.startLine, i.endLine])).toEqual([
      [0, 'js', 'a();', 10, 12],
      [1, 'typescript', 'b();', 16, 18],
    ]);
  });

  it('follows CommonMark fences: lengths, closing fence rules, indentation', () => {
    // A closing fence must use the same character and be at least as long as the opening one.
    expect(codes('````ts exec\n```\n~~~~\n````')).toEqual(['```\n~~~~']);
    expect(codes('~~~ts exec\n```\n~~~~~')).toEqual(['```']);
    // Up to three spaces of fence indentation are removed from each content line.
    expect(codes('   ```ts exec\n     a\n  b\nc\n   ```')).toEqual(['  a\nb\nc']);
    // Four spaces make indented code, not a fence.
    expect(codes('    ```ts exec\n    x\n    ```')).toEqual([]);
    // A backtick fence whose info string holds a backtick is not a fence at all; tildes may.
    expect(codes('```ts exec `x`\ny\n```')).toEqual([]);
    expect(codes('~~~ts exec `x`\ny\n~~~')).toEqual(['y']);
    // A closing fence may be indented up to three spaces and followed by spaces only.
    expect(codes('```ts exec\na\n   ```  \n')).toEqual(['a']);
    expect(codes('```ts exec\na\n``` x\n```')).toEqual(['a\n``` x']);
  });

  it('finds blocks in block quotes and list items, without their prefixes', () => {
    expect(codes('> ```ts exec\n> const a = 1;\n>   more();\n> ```')).toEqual(['const a = 1;\n  more();']);
    expect(codes('1. Run this:\n\n   ```ts exec\n   one();\n     two();\n   ```')).toEqual([
      'one();\n  two();',
    ]);
    expect(codes('- > ```js exec\n  > x\n  > ```')).toEqual(['x']);
  });

  it('reports unclosed blocks with closed: false, ended by the document or by their container', () => {
    expect(
      extractIntents('```ts exec\nhalf(\n').map((i) => [i.code, i.closed, i.startLine, i.endLine]),
    ).toEqual([['half(', false, 1, 2]]);
    expect(extractIntents('> ```ts exec\n> a\nnot quoted').map((i) => [i.code, i.closed, i.endLine])).toEqual(
      [['a', false, 2]],
    );
    expect(extractIntents('```ts exec').map((i) => [i.code, i.closed, i.endLine])).toEqual([['', false, 1]]);
  });

  it('keeps CRLF and CR line endings in code and counts lines across them', () => {
    expect(
      extractIntents('x\r\n```ts exec\r\na\r\nb\r\n```\r\n').map((i) => [i.code, i.startLine, i.endLine]),
    ).toEqual([['a\r\nb', 2, 5]]);
    expect(extractIntents('```ts exec\ra\rb\r```').map((i) => [i.code, i.endLine])).toEqual([['a\rb', 4]]);
  });

  it('decodes backslash escapes and entities in the info string', () => {
    const [intent] = extractIntents('```ts exec title=a&amp;b note=\\"x\\"\n1\n```');
    expect(intent?.info).toBe('ts exec title=a&b note="x"');
    expect(intent?.attributes).toEqual({ exec: true, title: 'a&b', note: 'x' });
  });

  it('rejects a non-string with a typed error', () => {
    expect(() => extractIntents(42 as unknown as string)).toThrow(IntentExtractorError);
    try {
      extractIntents(null as unknown as string);
    } catch (error) {
      expect((error as IntentExtractorError).code).toBe('INVALID_INPUT');
    }
  });
});

describe('extractIntents on hostile input', () => {
  it('handles thousands of nested block quotes without overflowing the stack, agreeing with the stream', () => {
    const markdown = `${'> '.repeat(8000)}\`\`\`ts exec\n${'>'.repeat(8000)}x\n`;
    const intents = extractIntents(markdown);
    expect(intents.map((intent) => [intent.code, intent.closed])).toEqual([['x', false]]);
    const stream = createIntentStream();
    expect([...stream.push(markdown), ...stream.end()]).toEqual(intents);
  }, 120_000);

  it('does not parse inline content (quadratic on runs of brackets)', () => {
    const markdown = `${'['.repeat(50_000)}\n\n\`\`\`ts exec\nok();\n\`\`\`\n`;
    expect(extractIntents(markdown).map((intent) => intent.code)).toEqual(['ok();']);
  });
});
