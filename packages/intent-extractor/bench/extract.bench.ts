// Intent extraction throughput on realistic chat output: batch (remark-parse) and streaming with
// 1-token (4-character) chunks, the linearity of streaming (10 MB vs 1 MB), and a check that both
// find the same intents.
import { type BenchResult, compared } from '../../../bench/lib.ts';
import { createIntentStream, extractIntents, type Intent, type IntentStream } from '../src/index.ts';
import { chatDocument } from './chat-document.ts';

const MB = 1_000_000;
const CHUNK = 4;
/**
 * Chunks are cut 64 KB at a time, outside the timed spans. A larger batch of pre-cut chunks stays
 * alive through the timed loop, so every scavenge copies it: at 1 MB (250,000 strings) that cost
 * about 10 ms per scavenge, which is the harness's garbage collection, not the extractor's.
 */
const SEGMENT = 65_536;
/** Rounds of the interleaved linearity measurement (each streams 10 MB plus ten times 1 MB). */
const ROUNDS = 6;

/** Wall-clock and CPU (user + system) milliseconds spent in `push`/`end`. */
interface Spent {
  ms: number;
  cpuMs: number;
}

/** What a server keeps of each intent while the stream runs: it runs the intent, then drops it. */
let consumed = 0;
function consume(intents: Intent[]): void {
  for (const intent of intents) consumed += intent.code.length;
}

/**
 * Streams `text[from, to)` into `extractor` in 4-character chunks (and ends the stream when `end`).
 * Only `push`/`end` are timed; cutting the chunks is not.
 */
function feed(extractor: IntentStream, text: string, from: number, to: number, end: boolean): Spent {
  let ms = 0;
  let cpuMs = 0;
  for (let start = from; start < to; start += SEGMENT) {
    const stop = Math.min(start + SEGMENT, to);
    const chunks: string[] = [];
    for (let i = start; i < stop; i += CHUNK) chunks.push(text.slice(i, Math.min(i + CHUNK, stop)));
    const last = end && stop >= to;
    const cpu = process.cpuUsage();
    const begin = performance.now();
    for (const chunk of chunks) consume(extractor.push(chunk));
    if (last) consume(extractor.end());
    ms += performance.now() - begin;
    const used = process.cpuUsage(cpu);
    cpuMs += (used.user + used.system) / 1000;
  }
  return { ms, cpuMs };
}

/** Streams a whole document into a new extractor. */
function stream(text: string): Spent {
  return feed(createIntentStream(), text, 0, text.length, true);
}

/** All intents of a streamed document (for the correctness check, not timed). */
function streamedIntents(text: string): Intent[] {
  const extractor = createIntentStream();
  const intents: Intent[] = [];
  for (let i = 0; i < text.length; i += CHUNK) intents.push(...extractor.push(text.slice(i, i + CHUNK)));
  intents.push(...extractor.end());
  return intents;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Linearity, measured interleaved so both sides see the same machine load and the same heap: each
 * round streams the 10 MB document into one extractor 1 MB at a time and, after each of those MB,
 * the 1 MB document into a fresh extractor. Per round: the 10 MB time and the mean 1 MB time.
 */
function linearity(doc1: string, doc10: string): { one: Spent[]; ten: Spent[] } {
  const one: Spent[] = [];
  const ten: Spent[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const big = createIntentStream();
    const total10: Spent = { ms: 0, cpuMs: 0 };
    const total1: Spent = { ms: 0, cpuMs: 0 };
    let runs = 0;
    for (let from = 0; from < doc10.length; from += MB) {
      const to = Math.min(from + MB, doc10.length);
      const part = feed(big, doc10, from, to, to >= doc10.length);
      total10.ms += part.ms;
      total10.cpuMs += part.cpuMs;
      const small = stream(doc1);
      total1.ms += small.ms;
      total1.cpuMs += small.cpuMs;
      runs++;
    }
    ten.push(total10);
    one.push({ ms: total1.ms / runs, cpuMs: total1.cpuMs / runs });
  }
  return { one, ten };
}

export default async function bench(): Promise<BenchResult[]> {
  const doc1 = chatDocument(1 * MB);
  const doc10 = chatDocument(10 * MB, 7);
  const mb1 = doc1.length / MB;
  const mb10 = doc10.length / MB;

  // Correctness first: the streamed intents of the benchmark document equal the batch ones.
  const streamed = streamedIntents(doc1);
  const begin = performance.now();
  const batch = extractIntents(doc1);
  const batchMs = performance.now() - begin;
  if (JSON.stringify(streamed) !== JSON.stringify(batch)) {
    throw new Error('streaming and batch extraction disagree on the benchmark document');
  }

  for (let i = 0; i < 5; i++) stream(doc1); // warm-up
  const { one, ten } = linearity(doc1, doc10);
  if (consumed === 0) throw new Error('no intents were consumed');
  const stream1Ms = median(one.map((s) => s.ms));
  const stream10Ms = median(ten.map((s) => s.ms));
  const stream1CpuMs = median(one.map((s) => s.cpuMs));
  const stream10CpuMs = median(ten.map((s) => s.cpuMs));
  const batchMbps = mb1 / (batchMs / 1000);
  const streamMbps = mb1 / (stream1Ms / 1000);
  const sizes = `sizes ${mb10.toFixed(2)} / ${mb1.toFixed(2)} MB, median of ${ROUNDS} interleaved rounds`;

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
      `ratio < 12 (linear; ${sizes})`,
    ),
    { name: 'extract streaming 4-char chunks 10 MB', value: mb10 / (stream10Ms / 1000), unit: 'MB/s' },
    {
      name: 'extract streaming 4-char chunks 1 MB, per CPU second',
      value: mb1 / (stream1CpuMs / 1000),
      unit: 'MB/s',
    },
    compared(
      'extract streaming 4-char chunks 10 MB, CPU time',
      stream10CpuMs,
      'ms',
      { name: 'extract streaming 1 MB, CPU time', value: stream1CpuMs },
      '< 12',
    ),
  ];
}
