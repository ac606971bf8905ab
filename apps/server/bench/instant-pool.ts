// An executor that answers at once, for the benchmarks that measure what schedules on the sandbox.
import type { ExecutionResult } from '@mci/sandbox';
import type { ExecutionPool } from '../src/processes/process-manager-types.ts';

/** What {@link instantPool} answers every execution with: `output(1 + 1)` that took no time. */
const INSTANT_RESULT: ExecutionResult = {
  status: 'success',
  outputs: [2],
  stdout: '',
  stderr: '',
  durationMs: 0,
  cpuTimeMs: 0,
  heapUsedBytes: 0,
};

/**
 * An executor of `size` workers that answers every execution with one `output` event (2) and
 * {@link INSTANT_RESULT}, so what is left to measure is the manager (and store) over it. With
 * `deferred`, the event and the result arrive on later turns of the event loop, as from the real
 * pool's workers; without it, the event is sent during `execute` and the result is already resolved.
 */
export function instantPool(size: number, { deferred = false }: { deferred?: boolean } = {}): ExecutionPool {
  return {
    size,
    execute: (request) => {
      const event = { seq: 1, type: 'output', value: 2 } as const;
      if (!deferred) {
        request.onEvent?.(event);
        return { result: Promise.resolve(INSTANT_RESULT), kill() {} };
      }
      setImmediate(() => request.onEvent?.(event));
      return { result: new Promise((resolve) => setImmediate(() => resolve(INSTANT_RESULT))), kill() {} };
    },
  };
}
