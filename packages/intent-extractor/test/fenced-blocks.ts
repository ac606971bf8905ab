// Test helpers: documents streamed cut at given positions, as intents, and as every fenced block (exec
// or not) the streaming parser reports, for comparing with `fencedBlocks` (remark) on documents whose
// fences mostly lack `exec`.
import type { FencedBlock } from '../src/fenced-block.ts';
import { createIntentStream, type Intent } from '../src/index.ts';
import { BlockParser } from '../src/stream/block-parser.ts';
import { LineSplitter } from '../src/stream/line-splitter.ts';

/** Runs `text` through an intent stream cut at the sorted positions `cuts`; returns every intent. */
export function streamed(text: string, cuts: readonly number[]): Intent[] {
  const stream = createIntentStream();
  const out: Intent[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    out.push(...stream.push(text.slice(from, cut)));
    from = cut;
  }
  out.push(...stream.end());
  return out;
}

/** Streams `text` cut at the sorted positions `cuts` and collects every fenced block. */
export function streamedFencedBlocks(text: string, cuts: readonly number[]): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const parser = new BlockParser({ wants: () => true, onFence: (block) => blocks.push(block) });
  const splitter = new LineSplitter(parser);
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    splitter.push(text.slice(from, cut));
    from = cut;
  }
  parser.finish(splitter.end());
  return blocks;
}

/** Cut positions for chunks of `size` characters. */
export function everyNth(text: string, size: number): number[] {
  const cuts: number[] = [];
  for (let i = size; i < text.length; i += size) cuts.push(i);
  return cuts;
}
