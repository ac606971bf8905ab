import { type Context, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RunFields } from '../processes/snapshots.ts';
import type { StoredProcess } from '../processes/process-store.ts';
import {
  ATTR_ERROR_CODE,
  ATTR_PID,
  ATTR_PRINCIPAL,
  ATTR_QUEUE_WAIT_MS,
  ATTR_REF,
  ATTR_RUN,
  ATTR_STATUS,
  ATTR_STREAM,
} from './attributes.ts';
import { isTracing } from './start-tracing.ts';
import { tracer } from './tracer.ts';

/** The span of one run of a process and the context its children start in. */
export interface RunTrace {
  span: Span;
  context: Context;
}

/** A run as its span follows it: the process, the run, and the span once it started. */
export interface TracedRun {
  record: StoredProcess;
  run: RunFields;
  trace?: RunTrace | undefined;
}

/**
 * Follows a run's state in its span (`mci.run`): started when the run is queued, as the child of
 * the active context then (the HTTP request, WebSocket message or MCP call that created or ran the
 * process); an event at `running` with the queue wait; ended at `idle` (with the status and the
 * error) or `suspended` (a resumed run is a new span). Does nothing when tracing is off.
 */
export function traceRunTransition(live: TracedRun): void {
  const { record, run } = live;
  if (!live.trace) {
    if (!isTracing() || record.state === 'idle') return;
    const parent = context.active();
    const span = tracer.startSpan(
      'mci.run',
      {
        attributes: {
          [ATTR_PID]: record.pid,
          [ATTR_RUN]: run.run,
          [ATTR_PRINCIPAL]: record.owner,
          ...(record.ref !== undefined && { [ATTR_REF]: record.ref }),
          ...(record.metadata?.streamId !== undefined && { [ATTR_STREAM]: record.metadata.streamId }),
        },
      },
      parent,
    );
    live.trace = { span, context: trace.setSpan(parent, span) };
  }
  const { span } = live.trace;
  switch (record.state) {
    case 'running': {
      const queued = run.queuedAt === undefined ? undefined : Date.parse(run.queuedAt);
      const started = run.startedAt === undefined ? Date.now() : Date.parse(run.startedAt);
      if (queued !== undefined) span.setAttribute(ATTR_QUEUE_WAIT_MS, Math.max(0, started - queued));
      span.addEvent('running');
      break;
    }
    case 'terminating':
      span.addEvent('terminating');
      break;
    case 'suspended':
      span.setAttribute(ATTR_STATUS, 'suspended');
      span.end();
      live.trace = undefined;
      break;
    case 'idle': {
      const status = record.status ?? 'idle';
      span.setAttribute(ATTR_STATUS, status);
      if (status !== 'success') {
        const code = run.error?.code;
        if (code !== undefined) span.setAttribute(ATTR_ERROR_CODE, code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: run.error?.message ?? status });
      }
      span.end();
      break;
    }
  }
}

/** Runs `work` with the run's span active (its log lines carry the trace), or plainly. */
export function inRunContext<T>(live: TracedRun, work: () => T): T {
  return live.trace ? context.with(live.trace.context, work) : work();
}
