import type { NodeSDK } from '@opentelemetry/sdk-node';

/** A started OpenTelemetry SDK: {@link Tracing.shutdown} exports the spans it holds, then stops it. */
export interface Tracing {
  /** Flushes the spans not exported yet and stops the SDK (idempotent). */
  shutdown(): Promise<void>;
}

/** The environment variables that turn tracing on: where to export spans, or which exporter. */
const ENABLING = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
] as const;

/** The service name spans carry when `OTEL_SERVICE_NAME` is not set. */
export const DEFAULT_SERVICE_NAME = 'mci-server';

let started: { sdk: NodeSDK; shutdown: Promise<void> | undefined } | undefined;

/**
 * Whether `env` asks for traces: one of `OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER` is set (not empty), unless
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`
 * and `OTEL_EXPORTER_OTLP_PROTOCOL` shape traces but do not turn them on alone.
 * @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
 */
export function tracingRequested(env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return ENABLING.some((name) => (env[name] ?? '').trim() !== '');
}

/** Whether {@link startTracing} started the SDK in this process (spans are recorded and exported). */
export function isTracing(): boolean {
  return started !== undefined && started.shutdown === undefined;
}

/**
 * Starts the OpenTelemetry Node SDK for this process when the standard `OTEL_*` variables of
 * `process.env` ask for traces (see {@link tracingRequested}); otherwise does nothing and loads
 * nothing (the code calls only `@opentelemetry/api`, whose spans are then no-ops). Call it once,
 * before the server is created: spans started before it are not recorded. `mci serve` calls it at
 * start; an embedder of `createServer` calls it itself.
 *
 * Traces only: OTLP over `http/protobuf` (the default) or `http/json`
 * (`OTEL_EXPORTER_OTLP_PROTOCOL`), `grpc` too, sampled by `OTEL_TRACES_SAMPLER`, named by
 * `OTEL_SERVICE_NAME` (default `mci-server`), propagated as W3C `traceparent`/`tracestate` only
 * (not `baggage`, unless `OTEL_PROPAGATORS` asks for it). No metrics or logs are exported and
 * nothing is auto-instrumented. The resource has the service, host, OS and
 * `OTEL_RESOURCE_ATTRIBUTES`, not the process's command line.
 * @returns the started SDK (the same one on a second call), or undefined when tracing is off.
 * @see https://opentelemetry.io/docs/languages/js/
 */
export async function startTracing(): Promise<Tracing | undefined> {
  if (!tracingRequested()) return undefined;
  if (!started) {
    // Loaded only here: a server without OTEL_* variables never loads the SDK.
    const [{ NodeSDK }, resources, { W3CTraceContextPropagator }] = await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
    ]);
    if (started) return handle();
    const sdk = new NodeSDK({
      ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
      // Not the process detector: its `process.command_args` would carry what the command line holds
      // (a database URL with its password). OTEL_NODE_RESOURCE_DETECTORS chooses otherwise.
      ...(process.env.OTEL_NODE_RESOURCE_DETECTORS
        ? {}
        : {
            resourceDetectors: [
              resources.serviceInstanceIdDetector,
              resources.hostDetector,
              resources.osDetector,
              resources.envDetector,
            ],
          }),
      // W3C Trace Context only: a caller's `baggage` would otherwise go on to every host a program
      // fetches. OTEL_PROPAGATORS chooses otherwise.
      ...(process.env.OTEL_PROPAGATORS ? {} : { textMapPropagator: new W3CTraceContextPropagator() }),
      metricReaders: [],
      logRecordProcessors: [],
    });
    sdk.start();
    started = { sdk, shutdown: undefined };
  }
  return handle();
}

function handle(): Tracing {
  return {
    shutdown: () => {
      if (!started) return Promise.resolve();
      started.shutdown ??= started.sdk.shutdown();
      return started.shutdown;
    },
  };
}
