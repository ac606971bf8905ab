// Intent extraction throughput on realistic chat output: batch (remark-parse) and streaming with
// 1-token (4-character) chunks, the linearity of streaming (10 MB vs 1 MB), and a check that both
// find the same intents.
import { type BenchResult, compared } from '../../../bench/lib.ts';
import { createIntentStream, extractIntents, type Intent } from '../src/index.ts';
import { chatDocument } from './chat-document.ts';

const MB = 1_000_000;

/** Cut into 4-character chunks 1 MB at a time, so the harness never holds millions of live chunks. */
const SEGMENT = MB;
const CHUNK = 4;

function chunksOf(text: string, from: number, to: number): string[] {
  const chunks: string[] = [];
  for (let i = from; i < to; i += CHUNK) chunks.push(text.slice(i, Math.min(i + CHUNK, to)));
  return chunks;
}

interface StreamRun {
  intents: Intent[];
  /** Wall-clock milliseconds spent in `push`/`end` (cutting the chunks is not counted). */
  ms: number;
  /** CPU milliseconds of this process (user + system) in the same spans: less disturbed by other load. */
  cpuMs: number;
}

function stream(text: string): StreamRun {
  const extractor = createIntentStream();
  const intents: Intent[] = [];
  let ms = 0;
  let cpuMs = 0;
  for (let from = 0; from < text.length; from += SEGMENT) {
    const chunks = chunksOf(text, from, Math.min(from + SEGMENT, text.length));
    const cpu = process.cpuUsage();
    const begin = performance.now();
    for (const chunk of chunks) for (const intent of extractor.push(chunk)) intents.push(intent);
    if (from + SEGMENT >= text.length) for (const intent of extractor.end()) intents.push(intent);
    ms += performance.now() - begin;
    const used = process.cpuUsage(cpu);
    cpuMs += (used.user + used.system) / 1000;
  }
  return { intents, ms, cpuMs };
}

/** Best of `runs` streaming runs (the least disturbed by other load on a shared machine). */
function best(text: string, runs: number): { ms: number; cpuMs: number } {
  let ms = Number.POSITIVE_INFINITY;
  let cpuMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const run = stream(text);
    ms = Math.min(ms, run.ms);
    cpuMs = Math.min(cpuMs, run.cpuMs);
  }
  return { ms, cpuMs };
}

export default async function bench(): Promise<BenchResult[]> {
  const doc1 = chatDocument(1 * MB);
  const doc10 = chatDocument(10 * MB, 7);
  const mb1 = doc1.length / MB;
  const mb10 = doc10.length / MB;

  // Correctness first: the streamed intents of the benchmark document equal the batch ones.
  const streamed = stream(doc1).intents;
  const begin = performance.now();
  const batch = extractIntents(doc1);
  const batchMs = performance.now() - begin;
  if (JSON.stringify(streamed) !== JSON.stringify(batch)) {
    throw new Error('streaming and batch extraction disagree on the benchmark document');
  }

  best(doc1, 5); // warm-up
  const stream1 = best(doc1, 10);
  const stream10 = best(doc10, 4);
  const batchMbps = mb1 / (batchMs / 1000);
  const streamMbps = mb1 / (stream1.ms / 1000);
  const stream1Ms = stream1.ms;
  const stream10Ms = stream10.ms;

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
    {
      name: 'extract streaming 4-char chunks 1 MB, per CPU second',
      value: mb1 / (stream1.cpuMs / 1000),
      unit: 'MB/s',
    },
    compared(
      'extract streaming 4-char chunks 10 MB, CPU time',
      stream10.cpuMs,
      'ms',
      { name: 'extract streaming 1 MB, CPU time', value: stream1.cpuMs },
      '< 12',
    ),
  ];
}
