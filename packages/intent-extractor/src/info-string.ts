import type { IntentAttributes } from './intent.ts';

/** What {@link parseInfoString} reads from an info string. */
export interface ParsedInfoString {
  /** First word, lower-cased; `''` when the string is empty or starts with an attribute (`exec=true`). */
  lang: string;
  /** The attributes after the language word. */
  attributes: IntentAttributes;
}

const isSpace = (code: number) => code === 32 || code === 9 || code === 10 || code === 13;

/**
 * Parses a (decoded) info string such as `ts exec=true id=fetch-user title="Load the user"`.
 *
 * The first word is the language unless it contains `=`, in which case it is read as an attribute and
 * the language is `''`. Never throws: an unterminated quote runs to the end of the string, and a token
 * with an empty key (`=x`) is ignored.
 *
 * @see https://spec.commonmark.org/0.31.2/#info-string
 */
export function parseInfoString(info: string): ParsedInfoString {
  const attributes: IntentAttributes = {};
  let i = 0;
  const n = info.length;
  while (i < n && isSpace(info.charCodeAt(i))) i++;
  let start = i;
  while (i < n && !isSpace(info.charCodeAt(i))) i++;
  const first = info.slice(start, i);
  let lang = '';
  if (first.includes('=')) i = start;
  else lang = first.toLowerCase();

  while (i < n) {
    while (i < n && isSpace(info.charCodeAt(i))) i++;
    if (i >= n) break;
    start = i;
    while (i < n && !isSpace(info.charCodeAt(i)) && info[i] !== '=') i++;
    const key = info.slice(start, i);
    let value: string | boolean = true;
    if (info[i] === '=') {
      i++;
      const quote = info[i];
      if (quote === '"' || quote === "'") {
        const close = info.indexOf(quote, i + 1);
        const end = close === -1 ? n : close;
        value = info.slice(i + 1, end);
        i = close === -1 ? n : close + 1;
      } else {
        start = i;
        while (i < n && !isSpace(info.charCodeAt(i))) i++;
        value = info.slice(start, i);
      }
      if (value === 'true') value = true;
      else if (value === 'false') value = false;
    }
    if (key !== '') attributes[key] = value;
  }
  return { lang, attributes };
}

/** Whether parsed attributes mark a block for execution: `exec`, `exec=true` or `exec="true"`. */
export function isExecAttributes(attributes: IntentAttributes): boolean {
  return attributes.exec === true;
}

/** Whether an info string marks its block for execution (see {@link isExecAttributes}). */
export function isExecInfo(info: string): boolean {
  // Cheap pre-check: most blocks in chat output are not exec blocks.
  return info.includes('exec') && isExecAttributes(parseInfoString(info).attributes);
}
