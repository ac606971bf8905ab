import { trace } from '@opentelemetry/api';

/**
 * The server's tracer. A proxy until an SDK registers a provider (see `startTracing`); without one,
 * its spans are no-ops.
 */
export const tracer = trace.getTracer('@mci/server');
