// Intent extraction throughput on realistic chat output: batch (remark-parse) and streaming with
// 1-token (4-character) chunks, the linearity of streaming (10 MB vs 1 MB), and a check that both
// find the same intents.
import { type BenchResult, compared } from '../../../bench/lib.ts';
import { createIntentStream, extractIntents, type Intent } from '../src/index.ts';
import { chatDocument } from './chat-document.ts';

const MB = 1_000_000;

/** Streams `text` in `chunkSize`-character chunks; returns the intents and the elapsed ms. */
function stream(text: string, chunkSize: number): { intents: Intent[]; ms: number } {
  const begin = performance.now();
  const extractor = createIntentStream();
  const intents: Intent[] = [];
  for (let i = 0; i < text.length; i += chunkSize) {
    for (const intent of extractor.push(text.slice(i, i + chunkSize))) intents.push(intent);
  }
  for (const intent of extractor.end()) intents.push(intent);
  return { intents, ms: performance.now() - begin };
}

/** Best of `runs` streaming runs (the least disturbed by other load on a shared machine). */
function bestStreamMs(text: string, runs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) best = Math.min(best, stream(text, 4).ms);
  return best;
}

export default async function bench(): Promise<BenchResult[]> {
  const doc1 = chatDocument(1 * MB);
  const doc10 = chatDocument(10 * MB, 7);
  const mb1 = doc1.length / MB;
  const mb10 = doc10.length / MB;

  // Correctness first: the streamed intents of the benchmark document equal the batch ones.
  const streamed = stream(doc1, 4).intents;
  const begin = performance.now();
  const batch = extractIntents(doc1);
  const batchMs = performance.now() - begin;
  if (JSON.stringify(streamed) !== JSON.stringify(batch)) {
    throw new Error('streaming and batch extraction disagree on the benchmark document');
  }

  bestStreamMs(doc1, 3); // warm-up
  const stream1Ms = bestStreamMs(doc1, 5);
  const stream10Ms = bestStreamMs(doc10, 3);
  const batchMbps = mb1 / (batchMs / 1000);
  const streamMbps = mb1 / (stream1Ms / 1000);

  return [
    { name: `extract batch (remark-parse) 1 MB, ${batch.length} intents`, value: batchMbps, unit: 'MB/s' },
    compared(
      'extract streaming 4-char chunks 1 MB',
      streamMbps,
      'MB/s',
      { name: 'extract batch 1 MB', value: batchMbps },
      '>= 20 MB/s',
    ),
    compared(
      'extract streaming 4-char chunks 10 MB',
      stream10Ms,
      'ms',
      { name: 'extract streaming 1 MB', value: stream1Ms },
      `ratio < 12 (linear; sizes ${mb10.toFixed(2)} / ${mb1.toFixed(2)} MB)`,
    ),
    { name: 'extract streaming 4-char chunks 10 MB', value: mb10 / (stream10Ms / 1000), unit: 'MB/s' },
  ];
}
