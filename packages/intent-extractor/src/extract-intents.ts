import type { Code, Nodes, Root } from 'mdast';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { IntentExtractorError } from './errors.ts';
import { type FencedBlock, intentFromBlock } from './fenced-block.ts';
import type { Intent } from './intent.ts';
import { hasClosingFence, remarkFenceClosure } from './remark-fence-closure.ts';

const processor = unified().use(remarkParse).use(remarkFenceClosure).freeze();

/**
 * Finds the exec intents of a markdown document: its fenced code blocks whose info string carries
 * `exec`, `exec=true` or `exec="true"`, in document order. Parsing is CommonMark (unified +
 * remark-parse), so what counts as a fenced block, and what its content is, is exactly what CommonMark
 * says, including blocks nested in block quotes and list items.
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
  const tree = processor.parse(markdown) as Root;
  const intents: Intent[] = [];
  const visit = (node: Nodes) => {
    if (node.type === 'code') {
      const block = fencedBlockOf(node);
      const intent = block && intentFromBlock(block, intents.length);
      if (intent) intents.push(intent);
      return;
    }
    if ('children' in node) for (const child of node.children) visit(child);
  };
  visit(tree);
  return intents;
}

function fencedBlockOf(node: Code): FencedBlock | null {
  const position = node.position;
  // Indented code has no info string, hence never an exec attribute.
  if (!position || node.lang == null) return null;
  return {
    lang: node.lang,
    meta: node.meta ?? null,
    value: node.value,
    startLine: position.start.line,
    closingLine: hasClosingFence(node) ? position.end.line : null,
  };
}
