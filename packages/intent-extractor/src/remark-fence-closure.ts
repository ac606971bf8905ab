import type { Code, Nodes } from 'mdast';
import type { CompileContext, Extension } from 'mdast-util-from-markdown';
import type { Processor } from 'unified';

/** What {@link remarkFenceClosure} records on fenced `code` nodes (`node.data`). */
export interface FenceClosureData {
  /** Fence sequences seen: 1 for the opening fence, 2 once a closing fence ended the block. */
  fenceSequences?: number;
}

function onExitFenceSequence(this: CompileContext): undefined {
  // The closing fence comes after the content buffer was opened, so search down the stack.
  for (let i = this.stack.length - 1; i >= 0; i--) {
    const node = this.stack[i] as Nodes;
    if (node.type === 'code') {
      const data: FenceClosureData = node.data ?? {};
      data.fenceSequences = (data.fenceSequences ?? 0) + 1;
      node.data = data;
      return;
    }
  }
}

const fromMarkdownExtension: Extension = { exit: { codeFencedFenceSequence: onExitFenceSequence } };

/**
 * A unified plugin for remark-parse that marks each fenced `code` node with the number of fence
 * sequences it has, so that a block closed by a fence can be told from one that the document or
 * its container ended. mdast itself does not record it.
 *
 * @see https://spec.commonmark.org/0.31.2/#fenced-code-blocks
 */
export function remarkFenceClosure(this: Processor): undefined {
  const data = this.data();
  data.fromMarkdownExtensions ??= [];
  data.fromMarkdownExtensions.push(fromMarkdownExtension);
}

/**
 * The fence sequences of a `code` node parsed with {@link remarkFenceClosure}: 0 for indented code,
 * 1 for a fenced block without closing fence, 2 for a closed one.
 */
export function fenceSequenceCount(node: Code): number {
  return (node.data as FenceClosureData | undefined)?.fenceSequences ?? 0;
}
