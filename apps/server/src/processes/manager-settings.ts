import { DEFAULT_RESPONSE_PIPE_BYTES, MIN_RESPONSE_PIPE_BYTES } from '@mci/protocol';
import { checkOption } from './limits.ts';
import type { ProcessManagerOptions } from './process-manager-types.ts';
import { QuotaPolicy } from './quota-policy.ts';
import { DEFAULT_OUTPUT_BYTES_PER_SECOND } from './run-output-limits.ts';
import { DEFAULT_MAX_OPEN_STREAMS, DEFAULT_STREAM_IDLE_MS } from './stream-registry.ts';

/** The process manager's numeric options, checked and with their defaults. */
export interface ManagerSettings {
  maxQueue: number;
  maxQueuedPerPrincipal: number;
  maxRunningPerPrincipal: number;
  concurrency: number;
  /** Bytes. */
  responsePipeBytes: number;
  maxOpenStreams: number;
  /** Milliseconds. */
  streamIdleMs: number;
  outputBytesPerSecond: number;
  /** The quotas of each principal, over `maxRunningPerPrincipal` and `maxQueuedPerPrincipal`. */
  quotas: QuotaPolicy;
}

/**
 * Checks the numeric options of {@link ProcessManagerOptions} (positive integers) and fills in the
 * defaults: a queue of 1000, as many slots as the pool has workers, and the defaults of the response
 * pipe, streams and output rate; resolves the quotas over the per-principal shares.
 * @throws RangeError naming the first bad option.
 */
export function managerSettings(options: ProcessManagerOptions): ManagerSettings {
  const maxQueue = checkOption('maxQueue', options.maxQueue, 1000);
  const maxQueuedPerPrincipal = checkOption('maxQueuedPerPrincipal', options.maxQueuedPerPrincipal, maxQueue);
  const concurrency = checkOption('concurrency', options.concurrency, Math.max(1, options.pool.size));
  const responsePipeBytes = checkOption(
    'responsePipeBytes',
    options.responsePipeBytes,
    DEFAULT_RESPONSE_PIPE_BYTES,
  );
  if (responsePipeBytes < MIN_RESPONSE_PIPE_BYTES) {
    throw new RangeError(`responsePipeBytes must be at least ${MIN_RESPONSE_PIPE_BYTES}`);
  }
  const maxRunningPerPrincipal = checkOption(
    'maxRunningPerPrincipal',
    options.maxRunningPerPrincipal,
    concurrency,
  );
  return {
    maxQueue,
    maxQueuedPerPrincipal,
    maxRunningPerPrincipal,
    concurrency,
    responsePipeBytes,
    maxOpenStreams: checkOption('maxOpenStreams', options.maxOpenStreams, DEFAULT_MAX_OPEN_STREAMS),
    streamIdleMs: checkOption('streamIdleMs', options.streamIdleMs, DEFAULT_STREAM_IDLE_MS),
    outputBytesPerSecond: checkOption(
      'outputBytesPerSecond',
      options.outputBytesPerSecond,
      DEFAULT_OUTPUT_BYTES_PER_SECOND,
    ),
    quotas: new QuotaPolicy(options.quotas, {
      maxRunning: maxRunningPerPrincipal,
      maxQueued: maxQueuedPerPrincipal,
    }),
  };
}
