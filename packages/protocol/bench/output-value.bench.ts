// What the server spends on one output value on the host: the output encoding (encodeOutputValue)
// and its stored JSON text, against V8's serializer, which stored the raw value before. Three shapes:
// a small object (the common output), a 1,000-row table, and a value JSON lacks (Map, Date, bigint).
import { serialize } from 'node:v8';
import { type BenchResult, compared } from '../../../bench/lib.ts';
import { encodeOutputValue } from '../src/index.ts';

const shapes: Record<string, unknown> = {
  'small object': { status: 200, item: { id: 42, name: 'blue widget', stock: 7 } },
  '1,000-row table': Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 1.5 })),
  'Map of Dates and bigints': new Map(
    Array.from({ length: 100 }, (_, i) => [`k${i}`, { at: new Date(i * 1000), n: BigInt(i) ** 3n }]),
  ),
};

let sink = 0;

/** Operations per second of `fn` over about `ms` milliseconds (after a warm-up). */
function rate(fn: () => number, ms = 400): number {
  for (let i = 0; i < 200; i++) sink += fn();
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 50; i++) sink += fn();
    count += 50;
    now = performance.now();
  }
  return (count * 1000) / (now - start);
}

export default async function bench(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const [name, value] of Object.entries(shapes)) {
    // Interleaved rounds, medians: the machine is shared.
    const encoded: number[] = [];
    const v8: number[] = [];
    for (let round = 0; round < 5; round++) {
      encoded.push(rate(() => JSON.stringify(encodeOutputValue(value)).length));
      v8.push(rate(() => serialize(value).length));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    results.push(
      compared(`output value ${name}: encode + JSON text (ops/s)`, median(encoded), 'ops/s', {
        name: 'v8.serialize of the raw value',
        value: median(v8),
      }),
    );
  }
  if (sink === 0) throw new Error('unreachable');
  return results;
}
