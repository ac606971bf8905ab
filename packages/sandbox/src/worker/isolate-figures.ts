import type ivm from 'isolated-vm';

/** How long the heap statistics of a finished run may take before they are reported as 0 (ms). */
const HEAP_STATS_WAIT_MS = 5;

/** CPU time the isolate used since `baseCpuTime` (ns), in ms; 0 when it can no longer be read. */
export function cpuTimeMsSince(isolate: ivm.Isolate, baseCpuTime: bigint): number {
  try {
    if (!isolate.isDisposed) return Number(isolate.cpuTime - baseCpuTime) / 1e6;
  } catch {
    // The isolate died under us (memory limit): the figure is unknown.
  }
  return 0;
}

/**
 * Calls `report` with the isolate's used heap (bytes): read at once when `busy` is false (nothing
 * runs in the isolate, so the lock is free), else asynchronously and given up after a few
 * milliseconds (a timer callback may still be looping), then 0. A disposed isolate reports 0.
 */
export function readHeapUsed(isolate: ivm.Isolate, busy: boolean, report: (bytes: number) => void): void {
  if (isolate.isDisposed) {
    report(0);
    return;
  }
  if (!busy) {
    let heap = 0;
    try {
      heap = isolate.getHeapStatisticsSync().used_heap_size;
    } catch {}
    report(heap);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  Promise.race([
    isolate.getHeapStatistics().then((stats) => stats.used_heap_size),
    new Promise<number>((resolve) => (timer = setTimeout(resolve, HEAP_STATS_WAIT_MS, 0))),
  ]).then(
    (heap) => {
      clearTimeout(timer);
      report(heap);
    },
    () => {
      clearTimeout(timer);
      report(0);
    },
  );
}
