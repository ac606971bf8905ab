import { listTools } from './tool-listing.ts';

/**
 * Default {@link SystemPromptOptions.toolPromptBudget}: 8,000 estimated tokens (about 32 KB), room
 * for the full declarations of some 50 to 100 typical tools.
 */
export const DEFAULT_TOOL_PROMPT_BUDGET = 8_000;

/** Options of {@link buildSystemPrompt}. */
export interface SystemPromptOptions {
  /** The TypeScript declarations of the sandbox globals and tools (`GET /tools.d.ts`). */
  toolsDts: string;
  /**
   * Most estimated tokens (4 bytes each, as in {@link SystemPromptReport}) the tools may take in the
   * prompt. Declarations within it go in whole; longer ones are replaced by a list of the tools'
   * names with the first line of each description (as many as fit; the rest by name only, then a
   * count), and the model is told to use `tools.search` and `tools.describe`.
   * @default DEFAULT_TOOL_PROMPT_BUDGET
   */
  toolPromptBudget?: number;
  /** Text appended after the generated prompt (house rules, a persona). */
  extra?: string;
}

/** The system prompt and how big it is, so a user sees what the tools cost in context. */
export interface SystemPrompt {
  text: string;
  report: SystemPromptReport;
}

/** Sizes of a system prompt: UTF-8 bytes, an estimate of tokens (4 bytes a token), and its parts. */
export interface SystemPromptReport {
  bytes: number;
  estimatedTokens: number;
  /** Bytes of the tool declarations alone (of the tool list when {@link SystemPromptReport.listed}). */
  toolsDtsBytes: number;
  /** Number of tools declared (or listed). */
  tools: number;
  /** True when the declarations were over the budget and the tools are listed by name instead. */
  listed?: boolean;
}

const HOW_TO = `You are an agent that acts by writing code. The code runs on MCI Server, in a sandbox with tools.

To run code, write a fenced TypeScript block marked exec=true:

\`\`\`ts exec=true
const res = await tools.some_tool({ id: 42 });
output(res.structuredContent ?? res.content[0]);
\`\`\`

How blocks run:
- Each exec=true block starts as soon as its closing fence is written, while you keep writing; the
  blocks of one answer run one after another, in order. Blocks do not share variables; keep what
  belongs together in one block.
- The code is the body of an async function: top-level await and return work; import and require do not.
  It is not Node: no filesystem, no process, no modules.
- output(value) records a result (JSON-compatible values); a returned value is recorded too.
  console.log/info go to stdout, console.warn/error to stderr.
- fetch(url, init) is a subset of the standard fetch; which hosts it may reach is the server's policy
  (private and loopback addresses are refused unless allowed).
- await state.set(key, value) keeps a value (Map, Date, bigint... too) for later blocks of this
  conversation, even after a restart; await state.get(key) reads it back, state.keys(prefix) lists keys.
- Each block has a time limit (30 seconds unless the server says otherwise) and a memory limit
  (128 MB). A block that runs over is stopped and reported as timed out.
- Tool calls resolve to a ToolResult; a failing tool call rejects with a ToolError (catch it to go on).
- Each block is type-checked against the declarations below before it runs: a tool that does not
  exist, a missing required input or a syntax error stops it before anything runs, and the results
  name the line to fix. Other type errors come back as warnings.
- Code blocks without exec=true are shown to the user and not run. Attributes after exec=true:
  id=NAME names a block, timeout=MS changes its time limit, check=warn runs it despite the check.

When your answer ends, you get a message starting with "Results of your code:" holding each block's
outputs, logs and errors. Read it and go on: write more blocks if you need more, or answer the user in
plain text, without exec=true blocks, when you are done. Never invent results you have not received.

The globals your code sees, declared in TypeScript:`;

/**
 * Builds the default system prompt: how to write an exec block (` ```ts exec=true `), what the
 * sandbox offers (`output()`, `console`, `fetch` and its policy, limits), and the TypeScript
 * declarations of the tools, or, when they are over `toolPromptBudget`, the globals with a list of
 * the tools and how to find and read them (`tools.search`, `tools.describe`).
 * @throws RangeError when `toolPromptBudget` is not a positive integer.
 */
export function buildSystemPrompt(options: SystemPromptOptions): SystemPrompt {
  const budget = options.toolPromptBudget ?? DEFAULT_TOOL_PROMPT_BUDGET;
  if (!Number.isSafeInteger(budget) || budget < 1)
    throw new RangeError(`toolPromptBudget must be a positive integer (tokens), not ${budget}`);
  const dts = options.toolsDts.trim();
  const extra = options.extra?.trim() ? [options.extra.trim()] : [];
  if (Math.ceil(Buffer.byteLength(dts) / 4) <= budget) {
    return measureSystemPrompt([HOW_TO, `\`\`\`ts\n${dts}\n\`\`\``, ...extra].join('\n\n'), dts);
  }
  const listing = listTools(dts, budget);
  const text = [HOW_TO, listing.text, ...extra].join('\n\n');
  const bytes = Buffer.byteLength(text);
  return {
    text,
    report: {
      bytes,
      estimatedTokens: Math.ceil(bytes / 4),
      toolsDtsBytes: Buffer.byteLength(listing.text),
      tools: listing.tools,
      listed: true,
    },
  };
}

/** The size report of a system prompt `text` (one given by the user, say) whose tool declarations are `toolsDts`. */
export function measureSystemPrompt(text: string, toolsDts = ''): SystemPrompt {
  const bytes = Buffer.byteLength(text);
  const tools = text.includes(toolsDts) ? countTools(toolsDts) : 0;
  return {
    text,
    report: {
      bytes,
      estimatedTokens: Math.ceil(bytes / 4),
      toolsDtsBytes: text.includes(toolsDts) ? Buffer.byteLength(toolsDts) : 0,
      tools,
    },
  };
}

/**
 * One line for humans: `system prompt: 9.1 KB (~2,300 tokens), 12 tools (7.0 KB of declarations)`,
 * or `..., 1000 tools listed by name (30.2 KB; found with tools.search)` over the budget.
 */
export function formatSystemPromptReport(report: SystemPromptReport): string {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const tools = report.listed
    ? `${report.tools} tools listed by name (${kb(report.toolsDtsBytes)}; found with tools.search)`
    : `${report.tools} tools (${kb(report.toolsDtsBytes)} of declarations)`;
  return `system prompt: ${kb(report.bytes)} (~${report.estimatedTokens.toLocaleString('en')} tokens), ${tools}`;
}

/**
 * Reads the declarations of a server's sandbox globals and tools: `GET {httpUrl}/tools.d.ts`.
 * @throws Error naming the URL and status when the server does not answer 200.
 */
export async function fetchToolDeclarations(
  httpUrl: string,
  options: { token?: string; signal?: AbortSignal } = {},
): Promise<string> {
  const url = `${httpUrl.replace(/\/$/, '')}/tools.d.ts`;
  const response = await fetch(url, {
    ...(options.token && { headers: { Authorization: `Bearer ${options.token}` } }),
    signal: options.signal ?? AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  return response.text();
}

function countTools(dts: string): number {
  const block = /declare const tools: \{\n([\s\S]*?)\n\};/.exec(dts)?.[1] ?? '';
  return block.split('\n').filter((line) => /^ {2}[^\s/*].*\): Promise<ToolResult>;$/.test(line)).length;
}
