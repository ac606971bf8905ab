import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Options of {@link startIdleCollector}. */
export interface IdleCollectorOptions {
  /** How often the event loop's load and the heap are looked at, in ms. @default 10000 */
  intervalMs?: number;
  /**
   * The event loop counts as quiet when it was busy for less than this fraction of the last interval
   * (`performance.eventLoopUtilization`). @default 0.05
   */
  maxUtilization?: number;
  /**
   * Collect only when the V8 heap's committed bytes grew by at least this much since the last
   * collection, in bytes. @default 32 MiB
   */
  minGrowthBytes?: number;
  /** Called after each collection with what it did. */
  onCollect?: (collection: IdleCollection) => void;
}

/** One collection of {@link startIdleCollector}: the V8 heap's bytes before and after it. */
export interface IdleCollection {
  committedBefore: number;
  committedAfter: number;
  usedBefore: number;
  usedAfter: number;
  /** How long the collection blocked the event loop, in ms. */
  durationMs: number;
}

/** A running {@link startIdleCollector}. */
export interface IdleCollector {
  /** Collections run so far. */
  readonly collections: number;
  /** Stops looking; idempotent. */
  stop(): void;
}

/** The options object of V8's `gc()` extension (`--expose-gc`). */
interface GcOptions {
  type: 'major' | 'minor';
  execution: 'sync' | 'async';
  flavor: 'regular' | 'last-resort';
}

let gcFunction: ((options: GcOptions) => void) | undefined;

/** V8's `gc()`, the function `--expose-gc` defines, taken from a new context made with that flag. */
function v8Gc(): (options: GcOptions) => void {
  if (gcFunction) return gcFunction;
  setFlagsFromString('--expose-gc');
  gcFunction = runInNewContext('gc') as (options: GcOptions) => void;
  return gcFunction;
}

/**
 * Gives the memory of a burst of load back to the system once the process has gone quiet.
 *
 * V8 collects the old generation only when allocation reaches a limit it sets higher the faster the
 * program allocates, grows the young generation under load, and keeps the pages a collection frees
 * for reuse. A server that goes idle after a burst therefore keeps the heap the burst grew for as
 * long as it stays idle. Every `intervalMs`, when the event loop was busy for under `maxUtilization`
 * of the interval and the heap's committed bytes grew by `minGrowthBytes` since the last collection,
 * this runs V8's memory-reducing collection (`gc({flavor: 'last-resort'})`: full collections until
 * nothing more is freed, then the freed pages and most of the young generation are released). Its
 * timer does not keep the process alive.
 */
export function startIdleCollector(options: IdleCollectorOptions = {}): IdleCollector {
  const intervalMs = options.intervalMs ?? 10_000;
  const maxUtilization = options.maxUtilization ?? 0.05;
  const minGrowthBytes = options.minGrowthBytes ?? 32 * 1024 * 1024;
  const gc = v8Gc();
  let committedAfterLast = getHeapStatistics().total_heap_size;
  let last = performance.eventLoopUtilization();
  let collections = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const before = getHeapStatistics();
    // A heap V8 shrank by itself lowers the mark the next growth is measured from.
    committedAfterLast = Math.min(committedAfterLast, before.total_heap_size);
    if (utilization >= maxUtilization || before.total_heap_size - committedAfterLast < minGrowthBytes) return;
    const started = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const durationMs = performance.now() - started;
    const after = getHeapStatistics();
    collections++;
    committedAfterLast = after.total_heap_size;
    last = performance.eventLoopUtilization();
    options.onCollect?.({
      committedBefore: before.total_heap_size,
      committedAfter: after.total_heap_size,
      usedBefore: before.used_heap_size,
      usedAfter: after.used_heap_size,
      durationMs,
    });
  }, intervalMs);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    stop: () => clearInterval(timer),
  };
}
