import { describe, expect, it } from 'vitest';
import { buildSystemPrompt, formatSystemPromptReport } from '../src/index.ts';

// Declarations as the server's /tools.d.ts writes them: the globals, then `tools` with its built-ins
// and one member per tool (doc comments of one line or several, names that are not identifiers,
// props over several lines).
const tool = (i: number) => `  /** Looks up record ${i} in the archive. */
  lookup_${i}(props: {
    /** The record id. */
    id: string;
  }): Promise<ToolResult>;
`;
const DTS = `declare function output(value: unknown): void;

/** The tools of this server, one async function each. */
declare const tools: {
  /**
   * Finds tools by what they do.
   */
  search(query: string, options?: { limit?: number }): Promise<ToolMatch[]>;
  /** Describes one tool. */
  describe(name: string): Promise<ToolDescription>;
  /**
   * Reads notes aloud.
   * Uses the secrets NOTES_KEY, added by the host (never visible to this code).
   */
  "read-notes"(props?: Record<string, unknown>): Promise<ToolResult>;
${Array.from({ length: 60 }, (_, i) => tool(i)).join('')}};
`;

describe('the tool prompt budget', () => {
  it('keeps the declarations when they fit', () => {
    const prompt = buildSystemPrompt({ toolsDts: DTS, toolPromptBudget: 10_000 });
    expect(prompt.text).toContain(DTS.trim());
    expect(prompt.report).toMatchObject({ tools: 61 });
    expect(prompt.report.listed).toBeUndefined();
  });

  it('lists every tool by name over it, the first ones with a line each', () => {
    const prompt = buildSystemPrompt({ toolsDts: DTS, toolPromptBudget: 500, extra: 'Be brief.' });
    const { text, report } = prompt;
    expect(report).toMatchObject({ listed: true, tools: 61 });
    expect(Math.ceil(report.toolsDtsBytes / 4)).toBeLessThanOrEqual(500);
    expect(text).toContain('declare function output(value: unknown): void;');
    expect(text).toContain('  search(query: string, options?: { limit?: number }): Promise<ToolMatch[]>;');
    expect(text).toContain('  describe(name: string): Promise<ToolDescription>;');
    expect(text).not.toContain('lookup_0(props');
    expect(text).toContain('The server has 61 tools, too many to declare here.');
    expect(text).toContain(
      '- read-notes: Reads notes aloud.\n- lookup_0: Looks up record 0 in the archive.\n',
    );
    expect(text).toMatch(/\nAlso: lookup_\d+, (lookup_\d+, )*lookup_59\n\nBe brief\.$/);
    expect(formatSystemPromptReport(report)).toMatch(
      /, 61 tools listed by name \(\d+\.\d KB; found with tools\.search\)$/,
    );
  });

  it('lists as many names as fit, and counts the rest, when not every name fits', () => {
    const { text, report } = buildSystemPrompt({ toolsDts: DTS, toolPromptBudget: 300 });
    expect(Math.ceil(report.toolsDtsBytes / 4)).toBeLessThanOrEqual(300);
    expect(text).not.toContain('- read-notes');
    expect(text).toMatch(
      /\nAlso: read-notes, lookup_0, lookup_1, .*\n\.\.\.and \d+ more: find them with tools\.search\(query\)\.$/,
    );
  });

  it('refuses a budget that is not a positive integer', () => {
    expect(() => buildSystemPrompt({ toolsDts: DTS, toolPromptBudget: 0 })).toThrow(RangeError);
    expect(() => buildSystemPrompt({ toolsDts: DTS, toolPromptBudget: 1.5 })).toThrow(
      'toolPromptBudget must be a positive integer (tokens), not 1.5',
    );
  });
});

describe('skills under the tool prompt budget', () => {
  it('keeps the declarations of skills after the tools whole when the tools are listed by name', () => {
    const skills = `interface Skills {
  /** Saves a skill. */
  save(skill: { name: string; description: string; code: string }): Promise<SavedSkill>;
}
declare const skills: Skills;

/** The saved skills of this principal. */
interface Skills {
  /** Counts the users of each country. */
  usersByCountry(input?: { limit?: number }): Promise<any>;
}`;
    const prompt = buildSystemPrompt({ toolsDts: `${DTS}\n${skills}\n`, toolPromptBudget: 700 });
    expect(prompt.report).toMatchObject({ listed: true, tools: 61 });
    expect(prompt.text).toContain(skills);
    expect(prompt.text).not.toContain('lookup_0(props');
  });
});
