import { describe, expect, it } from 'vitest';
import { buildSystemPrompt, formatSystemPromptReport, redact, toModelMessages } from '../src/index.ts';

const DTS = `declare function output(value: unknown): void;

/** The tools of this server, one async function each. */
declare const tools: {
  /** Greets */
  greet(props: {
    name: string;
  }): Promise<ToolResult>;
  ping(props?: {}): Promise<ToolResult>;
};
`;

describe('system prompt', () => {
  it('explains exec blocks and carries the declarations, with a size report', () => {
    const prompt = buildSystemPrompt({ toolsDts: DTS, extra: 'Answer in French.' });
    expect(prompt.text).toContain('```ts exec=true');
    expect(prompt.text).toContain('Results of your code:');
    expect(prompt.text).toContain(DTS.trim());
    expect(prompt.text.endsWith('Answer in French.')).toBe(true);
    expect(prompt.report).toEqual({
      bytes: Buffer.byteLength(prompt.text),
      estimatedTokens: Math.ceil(Buffer.byteLength(prompt.text) / 4),
      toolsDtsBytes: Buffer.byteLength(DTS.trim()),
      tools: 2,
    });
    expect(formatSystemPromptReport(prompt.report)).toMatch(
      /^system prompt: \d+\.\d KB \(~[\d,]+ tokens\), 2 tools/,
    );
  });
});

describe('toModelMessages', () => {
  it('sends results as user messages and joins consecutive messages of one role', () => {
    expect(
      toModelMessages([
        { role: 'user', text: 'a' },
        { role: 'assistant', text: 'b' },
        { role: 'results', text: 'Results of your code:\n\nr' },
        { role: 'user', text: 'c' },
      ]),
    ).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'Results of your code:\n\nr\n\nc' },
    ]);
  });
});

describe('redact', () => {
  it('cuts the given secrets and key-shaped words, also partly masked ones', () => {
    expect(redact('key abc123secret in text', ['abc123secret'])).toBe('key [redacted] in text');
    expect(redact('Incorrect API key provided: sk-proj-abc1***********wxyz.', [])).toBe(
      'Incorrect API key provided: [redacted].',
    );
    expect(redact('x-api-key sk-ant-api03-AbCdEf012345', [])).toBe('x-api-key [redacted]');
    expect(redact('a plain message', ['abc'])).toBe('a plain message');
  });
});
