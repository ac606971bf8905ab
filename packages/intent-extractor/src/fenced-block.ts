import { parseInfoString } from './info-string.ts';
import type { Intent } from './intent.ts';

/**
 * A fenced code block as both extractors see it, before it becomes an {@link Intent}: the batch
 * extractor reads it from remark's `code` node, the streaming one from its own block parser.
 * `lang` and `meta` follow mdast: the decoded first word of the info string and the decoded rest.
 */
export interface FencedBlock {
  lang: string | null;
  meta: string | null;
  value: string;
  startLine: number;
  /** Line of the closing fence, or `null` when no closing fence ended the block. */
  closingLine: number | null;
}

/** The info string as the extractors report it: language and meta joined by one space, trimmed. */
export function infoOf(lang: string | null, meta: string | null): string {
  return (meta ? `${lang ?? ''} ${meta}` : (lang ?? '')).trim();
}

/** Turns a fenced block into an intent, or `null` when its info string does not carry `exec`. */
export function intentFromBlock(block: FencedBlock, index: number): Intent | null {
  const info = infoOf(block.lang, block.meta);
  const { lang, attributes } = parseInfoString(info);
  if (attributes.exec !== true) return null;
  return {
    index,
    lang,
    code: block.value,
    attributes,
    info,
    startLine: block.startLine,
    // Without a closing fence, the block ends with its code's last line (remark's end positions
    // differ there on whether the last line ending belongs to the block).
    endLine: block.closingLine ?? block.startLine + lineCount(block.value),
    closed: block.closingLine !== null,
  };
}

function lineCount(text: string): number {
  if (text === '') return 0;
  let count = 1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || (code === 13 && text.charCodeAt(i + 1) !== 10)) count++;
  }
  return count;
}
