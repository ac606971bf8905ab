/** One member of `declare const tools: { ... }` in `/tools.d.ts`: its doc comment and signature lines. */
interface Member {
  name: string;
  /** A tool (`name(props...)`), or a built-in such as `search(query...)`. */
  tool: boolean;
  /** The first line of its doc comment. */
  summary: string;
  lines: string[];
}

/** The tools of a prompt that has no room for their declarations. */
export interface ToolListing {
  /**
   * The declarations of the globals (in a ```ts fence) with `tools` reduced to its built-ins
   * (`search`, `describe`), how to find the tools, and the tools: names with one line each while
   * the budget lasts.
   */
  text: string;
  /** Number of tools. */
  tools: number;
}

const TOOLS_BLOCK = /^(?:\/\*\*[^\n]*\*\/\n)?declare const tools: \{\n([\s\S]*?)^\};$/m;
const MEMBER_NAME = /^ {2}("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)\((\w+)/;
/** Longest description line in the listing, in characters. */
const MAX_SUMMARY = 120;

/**
 * Lists the tools of `/tools.d.ts` text `dts` after the globals, all in at most `budgetTokens`
 * estimated tokens (4 bytes each) when the globals leave room: every tool by name when the names fit
 * (else as many as fit and a count of the rest), the first ones as `- name: first line of its
 * description` as far as the budget allows; the declarations after the tools (`skills`) stay whole.
 * Reads the declarations as `renderSandboxGlobals` of
 * `@mci/server` writes them.
 */
export function listTools(dts: string, budgetTokens: number): ToolListing {
  const block = TOOLS_BLOCK.exec(dts);
  const members = block ? parseMembers(block[1] ?? '') : [];
  const builtIns = members.filter((member) => !member.tool).flatMap((member) => member.lines);
  const tools = members.filter((member) => member.tool);
  const declaration = `/** The tools of this server: tools.<name>(props) for each tool listed below, and these. */\ndeclare const tools: {\n${builtIns.map((line) => `${line}\n`).join('')}};`;
  // What follows the tools (`skills` and the principal's own skills) stays whole.
  const after = block ? dts.slice(block.index + block[0].length).trim() : '';
  const globals = block
    ? `${dts.slice(0, block.index).trimEnd()}\n\n${declaration}${after === '' ? '' : `\n\n${after}`}`
    : dts;
  const head = `\`\`\`ts\n${globals}\n\`\`\`\n\nThe server has ${tools.length} tools, too many to declare here. Each is an async function tools.<name>(props) resolving to a ToolResult. Find the tools for a task with tools.search(query), and read a tool's declaration (its props) with tools.describe(name) before calling it: output what you found, or find, describe and call in one block. The tools:`;
  const tail = (count: number) => `...and ${count} more: find them with tools.search(query).`;
  const room = budgetTokens * 4 - Buffer.byteLength(`${head}\n\nAlso: \n${tail(tools.length)}`);
  const lineOf = (tool: Member) => `- ${tool.name}${tool.summary ? `: ${tool.summary}` : ''}`;
  const nameBytes = (tool: Member) => Buffer.byteLength(tool.name) + 2;
  // Every name when they all fit, the first tools with a line each as far as the rest allows;
  // else as many names as fit.
  let spare = room - tools.reduce((sum, tool) => sum + nameBytes(tool), 0);
  let listed = 0;
  while (spare >= 0 && listed < tools.length) {
    const tool = tools[listed]!;
    const extra = Buffer.byteLength(lineOf(tool)) + 1 - nameBytes(tool);
    if (extra > spare) break;
    spare -= extra;
    listed++;
  }
  const lines = tools.slice(0, listed).map(lineOf);
  const names: string[] = [];
  let left = spare >= 0 ? Number.POSITIVE_INFINITY : room;
  for (const tool of tools.slice(listed)) {
    if (nameBytes(tool) > left) break;
    names.push(tool.name);
    left -= nameBytes(tool);
  }
  if (names.length > 0) lines.push(`Also: ${names.join(', ')}`);
  const rest = tools.length - listed - names.length;
  if (rest > 0) lines.push(tail(rest));
  return { text: `${head}\n\n${lines.join('\n')}`, tools: tools.length };
}

/** The members of the body of `declare const tools: { ... }`. */
function parseMembers(body: string): Member[] {
  const members: Member[] = [];
  let doc: string[] = [];
  let inDoc = false;
  let lines: string[] = [];
  for (const line of body.split('\n')) {
    if (lines.length === 0 && (inDoc || /^ {2}\/\*\*/.test(line))) {
      doc.push(line);
      inDoc = !line.includes('*/');
      continue;
    }
    lines.push(line);
    // A member ends with the line at its own indent that closes it with `;`.
    if (!/^ {2}\S.*;$/.test(line)) continue;
    const match = MEMBER_NAME.exec(lines[0] ?? '');
    if (match) {
      const name = match[1]!.startsWith('"') ? (JSON.parse(match[1]!) as string) : match[1]!;
      members.push({ name, tool: match[2] === 'props', summary: summaryOf(doc), lines: [...doc, ...lines] });
    }
    doc = [];
    lines = [];
  }
  return members;
}

/** The first line of a doc comment's text, at most {@link MAX_SUMMARY} characters. */
function summaryOf(doc: string[]): string {
  const first =
    doc
      .map((line) =>
        line
          .replace(/^\s*\/\*\*/, '')
          .replace(/\*\/\s*$/, '')
          .replace(/^\s*\*(?!\/)/, '')
          .trim(),
      )
      .find((line) => line !== '') ?? '';
  return first.length > MAX_SUMMARY ? `${first.slice(0, MAX_SUMMARY - 3)}...` : first;
}
