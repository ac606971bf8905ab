// Line-level syntax of the CommonMark block starts that decide where fenced code blocks are. All
// patterns are sticky (`y`): set `lastIndex` to the first non-space character and `test` the line,
// which never includes its line ending.
import { decodeString } from 'micromark-util-decode-string';
import { htmlBlockNames, htmlRawNames } from 'micromark-util-html-tag-name';

/** @see https://spec.commonmark.org/0.31.2/#atx-headings */
export const ATX_HEADING = /#{1,6}(?:[ \t]+|$)/y;
/** A backtick fence may not have a backtick in its info string. @see https://spec.commonmark.org/0.31.2/#code-fence */
export const OPENING_FENCE = /`{3,}(?!.*`)|~{3,}/sy;
/** @see https://spec.commonmark.org/0.31.2/#fenced-code-blocks */
export const CLOSING_FENCE = /(?:`{3,}|~{3,})(?=[ \t]*$)/y;
/** @see https://spec.commonmark.org/0.31.2/#setext-headings */
export const SETEXT_UNDERLINE = /(?:=+|-+)[ \t]*$/y;
/** @see https://spec.commonmark.org/0.31.2/#thematic-breaks */
export const THEMATIC_BREAK = /(?:\*[ \t]*){3,}$|(?:_[ \t]*){3,}$|(?:-[ \t]*){3,}$/y;
/** @see https://spec.commonmark.org/0.31.2/#list-items */
export const BULLET_MARKER = /[*+-]/y;
export const ORDERED_MARKER = /(\d{1,9})([.)])/y;

const rawNames = htmlRawNames.join('|');
const blockNames = htmlBlockNames.join('|');
const ATTRIBUTE = `(?:[ \\t]+[a-zA-Z_:][a-zA-Z0-9_.:-]*(?:[ \\t]*=[ \\t]*(?:[^"'=<>\`\\x00-\\x20]+|'[^']*'|"[^"]*"))?)`;

/**
 * Start conditions 1-7 of HTML blocks (index = condition), as micromark implements them.
 * @see https://spec.commonmark.org/0.31.2/#html-blocks
 */
const HTML_OPEN: readonly RegExp[] = [
  /(?!)/y,
  new RegExp(`<(?:${rawNames})(?:[ \\t>]|$)`, 'iy'),
  /<!--/y,
  /<\?/y,
  /<![A-Za-z]/y,
  /<!\[CDATA\[/y,
  new RegExp(`<\\/?(?:${blockNames})(?:[ \\t>]|\\/>|$)`, 'iy'),
  new RegExp(
    `(?:<[A-Za-z][A-Za-z0-9-]*${ATTRIBUTE}*[ \\t]*\\/?>|<\\/[A-Za-z][A-Za-z0-9-]*[ \\t]*>)[ \\t]*$`,
    'y',
  ),
];

/** End conditions of HTML blocks 1-5; blocks 6 and 7 end at a blank line. */
const HTML_CLOSE: readonly (RegExp | null)[] = [
  null,
  new RegExp(`<\\/(?:${rawNames})>`, 'i'),
  /-->/,
  /\?>/,
  />/,
  /\]\]>/,
  null,
  null,
];

/**
 * The HTML block condition (1-7) that the line starts at `offset`, or 0. Condition 7 cannot
 * interrupt a paragraph, so the caller passes `allowComplete`.
 */
export function htmlBlockStart(line: string, offset: number, allowComplete: boolean): number {
  const last = allowComplete ? 7 : 6;
  for (let kind = 1; kind <= last; kind++) {
    const pattern = HTML_OPEN[kind]!;
    pattern.lastIndex = offset;
    if (pattern.test(line)) return kind;
  }
  return 0;
}

/** Whether `text` (a line's content inside an HTML block of condition `kind`) ends the block. */
export function htmlBlockEnds(kind: number, text: string): boolean {
  return HTML_CLOSE[kind]?.test(text) ?? false;
}

/** Whether a character may begin a block start other than a paragraph (commonmark.js `reMaybeSpecial`). */
export function maybeSpecial(code: number): boolean {
  return (
    code === 35 ||
    code === 96 ||
    code === 126 ||
    code === 42 ||
    code === 43 ||
    code === 95 ||
    code === 61 ||
    code === 60 ||
    code === 62 ||
    code === 45 ||
    (code >= 48 && code <= 57)
  );
}

/** Runs a sticky pattern at `offset` and returns the match, or null. */
export function matchAt(pattern: RegExp, line: string, offset: number): RegExpExecArray | null {
  pattern.lastIndex = offset;
  return pattern.exec(line);
}

/** Whether a sticky pattern matches at `offset`. */
export function testAt(pattern: RegExp, line: string, offset: number): boolean {
  pattern.lastIndex = offset;
  return pattern.test(line);
}

/** Splits the rest of an opening fence line like micromark: first word, then the rest. */
export function splitInfo(raw: string): { lang: string | null; meta: string | null } {
  const text = raw.includes('\0') ? raw.replaceAll('\0', '\uFFFD') : raw;
  const match = /^[ \t]*([^ \t]+)(?:[ \t]+([^ \t].*))?/s.exec(text);
  if (!match) return { lang: null, meta: null };
  const meta = match[2];
  return { lang: decodeString(match[1]!), meta: meta === undefined ? null : decodeString(meta) };
}
