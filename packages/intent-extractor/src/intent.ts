/**
 * Attributes parsed from a fenced code block's info string, after the language word:
 * `key=value`, `key="quoted value"`, `key='quoted'` and bare flags (`key` -> `true`).
 * Values `true` and `false` (quoted or not) become booleans; every other value stays a string
 * (`timeout=5000` -> `'5000'`). Keys are case-sensitive; a repeated key keeps its last value.
 */
export type IntentAttributes = Record<string, string | boolean>;

/**
 * An intent to run code: a fenced code block whose info string carries `exec`, `exec=true` or
 * `exec="true"`.
 *
 * @see https://spec.commonmark.org/0.31.2/#fenced-code-blocks
 */
export interface Intent {
  /** Position among the exec intents of the document, from 0, in document order. */
  index: number;
  /** First word of the info string, lower-cased (`ts`, `typescript`, `js`, ...); `''` when absent. */
  lang: string;
  /**
   * The block's content with CommonMark's indentation and container prefixes (`> `, list item
   * indentation) removed; lines are joined by their original line endings (`\n`, `\r\n` or `\r`),
   * with no trailing line ending.
   */
  code: string;
  /** The info string's attributes (see {@link IntentAttributes}). */
  attributes: IntentAttributes;
  /**
   * The info string after CommonMark's backslash-escape and entity decoding, trimmed: the language
   * word and the rest, joined by one space.
   *
   * @see https://spec.commonmark.org/0.31.2/#info-string
   */
  info: string;
  /** 1-based line of the opening fence. */
  startLine: number;
  /**
   * 1-based line of the closing fence; for an unclosed block, the last line that belongs to the
   * block (the opening fence line when it has no content).
   */
  endLine: number;
  /**
   * `true` when a closing fence ended the block; `false` when the document (or stream) ended inside
   * it, or when the block quote or list item holding it ended first. Unclosed intents must not run.
   */
  closed: boolean;
  /**
   * Set when the block's content passed the stream's `maxBlockLength`: `code` is empty, `closed` is
   * false, and the block must not run (see `createIntentStream`).
   */
  tooLarge?: true;
}
