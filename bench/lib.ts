/**
 * Shared types and helpers for the workspace benchmarks run by `pnpm bench`.
 *
 * Each package keeps its benchmarks in `bench/*.bench.ts`; a bench file default-exports an async
 * function that returns {@link BenchResult} rows. `scripts/bench.ts` runs every file in its own
 * Node process (started with `--no-node-snapshot` for isolated-vm) and writes `bench/results.json`.
 */

/** One measured number, optionally compared with a baseline measured in the same run. */
export interface BenchResult {
  /** What was measured, for example `template render 10KB`. */
  name: string;
  /** The measured value, in `unit`. */
  value: number;
  /** Unit of `value`: `ops/s`, `ms`, `us`, `MB/s`, `ratio`, ... */
  unit: string;
  /** The baseline measured in the same run, in the same unit. */
  baseline?: { name: string; value: number };
  /** `value / baseline.value`. */
  ratio?: number;
  /** The target the issue names, as readable text (`>= 20 MB/s`, `< 3 ms`). */
  target?: string;
}

/** A bench file's default export. */
export type BenchFile = () => Promise<BenchResult[]>;

/** Builds a result compared with a baseline; `ratio` is `value / baseline`. */
export function compared(
  name: string,
  value: number,
  unit: string,
  baseline: { name: string; value: number },
  target?: string,
): BenchResult {
  return { name, value, unit, baseline, ratio: baseline.value === 0 ? 0 : value / baseline.value, target };
}

/** The p-th percentile (0..100) of `samples` (nearest-rank; sorts a copy). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Runs `fn` repeatedly for about `durationMs` (after `warmup` calls) and returns the latency
 * samples in milliseconds.
 */
export async function sample(fn: () => unknown, durationMs = 1000, warmup = 20): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return samples;
}
