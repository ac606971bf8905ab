import { describe, expect, it } from 'vitest';
import { tracingRequested } from './start-tracing.ts';

describe('tracingRequested', () => {
  it('is on for a destination or an exporter, off for everything else', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    // Shaping variables alone, and empty values, do not turn traces on.
    expect(
      tracingRequested({
        OTEL_SERVICE_NAME: 'mci',
        OTEL_TRACES_SAMPLER: 'always_on',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_ENDPOINT: '  ',
      }),
    ).toBe(false);
  });

  it('stays off when the environment says so, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingRequested({ ...endpoint, OTEL_TRACES_EXPORTER: ' none ' })).toBe(false);
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: 'false' })).toBe(true);
  });
});
