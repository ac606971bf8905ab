import type ivm from 'isolated-vm';

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
 * The isolate's used heap (bytes), read synchronously: call it only when no code runs in the
 * isolate (the read waits for the isolate's lock). 0 for a disposed isolate.
 */
export function heapUsedBytes(isolate: ivm.Isolate): number {
  try {
    if (!isolate.isDisposed) return isolate.getHeapStatisticsSync().used_heap_size;
  } catch {}
  return 0;
}
