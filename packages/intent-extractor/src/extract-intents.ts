import type { Code, Nodes, Root } from 'mdast';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { IntentExtractorError } from './errors.ts';
import { type FencedBlock, intentFromBlock } from './fenced-block.ts';
import type { Intent } from './intent.ts';
import { fenceSequenceCount, remarkFenceClosure } from './remark-fence-closure.ts';
import { remarkSkipInline } from './remark-skip-inline.ts';

const processor = unified().use(remarkParse).use(remarkSkipInline).use(remarkFenceClosure).freeze();

/**
 * Finds the exec intents of a markdown document: its fenced code blocks whose info string carries
 * `exec`, `exec=true` or `exec="true"`, in document order. Parsing is CommonMark (unified +
 * remark-parse), so what counts as a fenced block, and what its content is, is exactly what CommonMark
 * says, including blocks nested in block quotes and list items.
 *
 * remark-parse runs well under 1 MB/s and is quadratic in nesting depth; for large or untrusted text,
 * {@link createIntentStream} gives the same intents in linear time.
 *
 * @param markdown - The whole document.
 * @returns The intents, `index` counting from 0.
 * @throws {IntentExtractorError} `INVALID_INPUT` when `markdown` is not a string.
 * @see https://spec.commonmark.org/0.31.2/#fenced-code-blocks
 */
export function extractIntents(markdown: string): Intent[] {
  if (typeof markdown !== 'string') {
    throw new IntentExtractorError(
      'INVALID_INPUT',
      `extractIntents expects a string, got ${typeof markdown}`,
    );
  }
  const intents: Intent[] = [];
  for (const block of fencedBlocks(markdown)) {
    const intent = intentFromBlock(block, intents.length);
    if (intent) intents.push(intent);
  }
  return intents;
}

/** Every fenced code block of a document, in document order, as remark-parse sees it. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  // Depth-first in document order, without recursion: hostile nesting must not overflow the stack.
  const stack: Nodes[] = [processor.parse(markdown) as Root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'code') {
      const block = fencedBlockOf(node);
      if (block) blocks.push(block);
    } else if ('children' in node) {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
  }
  return blocks;
}

function fencedBlockOf(node: Code): FencedBlock | null {
  const position = node.position;
  const fences = fenceSequenceCount(node);
  // Indented code has no info string, hence never an exec attribute.
  if (!position || fences === 0) return null;
  return {
    lang: node.lang ?? null,
    meta: node.meta ?? null,
    value: node.value,
    startLine: position.start.line,
    closingLine: fences === 2 ? position.end.line : null,
  };
}
