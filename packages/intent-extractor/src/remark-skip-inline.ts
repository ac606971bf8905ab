import type { Processor } from 'unified';

/**
 * Inline constructs of micromark. Fenced code blocks are block structure, which never depends on
 * inline parsing, and some inline constructs are quadratic on hostile input (50,000 `[` take remark
 * half a minute), so extraction turns them off. Character escapes and references stay on: info
 * strings need them.
 *
 * @see https://spec.commonmark.org/0.31.2/#blocks-and-inlines
 */
const INLINE_CONSTRUCTS = [
  'attention',
  'autolink',
  'codeText',
  'hardBreakEscape',
  'hardBreakTrailing',
  'htmlText',
  'labelStartImage',
  'labelStartLink',
  'labelEnd',
];

/** A unified plugin for remark-parse that parses block structure only (see {@link INLINE_CONSTRUCTS}). */
export function remarkSkipInline(this: Processor): undefined {
  const data = this.data();
  data.micromarkExtensions ??= [];
  data.micromarkExtensions.push({ disable: { null: INLINE_CONSTRUCTS } });
}
