import { createServer, type Server } from 'node:http';

// A fake OpenTelemetry collector for tests: a real HTTP server on 127.0.0.1 that takes OTLP/HTTP
// `http/json` trace exports (`POST /v1/traces`) and keeps their spans, flattened.

/** One exported span, its attributes as plain values. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  service: string;
  attributes: Record<string, unknown>;
  events: string[];
  status: { code?: number; message?: string };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

const valueOf = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue === undefined ? undefined : Number(value.intValue)) ??
  value.doubleValue ??
  value.boolValue;

const attributesOf = (list: OtlpAttribute[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

/** A running collector: its endpoint, the spans it got, the raw bodies, and a wait for spans. */
export interface OtlpCollector {
  /** `http://127.0.0.1:PORT`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: CollectedSpan[];
  /** Every request body as received (to look for values that must not be there). */
  bodies: string[];
  /** Resolves with the spans once `done(spans)` holds; rejects after `timeoutMs`. */
  waitFor(done: (spans: CollectedSpan[]) => boolean, timeoutMs?: number): Promise<CollectedSpan[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts a collector on 127.0.0.1 (a free port). */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const bodies: string[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      bodies.push(text);
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !/json/.test(req.headers['content-type'] ?? '')
      ) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(text) as { resourceSpans?: any[] };
      for (const resource of body.resourceSpans ?? []) {
        const service = String(attributesOf(resource.resource?.attributes)['service.name'] ?? '');
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              service,
              attributes: attributesOf(span.attributes),
              events: (span.events ?? []).map((event: { name: string }) => event.name),
              status: span.status ?? {},
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    spans,
    bodies,
    waitFor: (done, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!done(spans)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the collector got ${spans.length} spans, not the ones awaited:\n${printSpanTree(spans)}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

/** The spans as indented trees, one line a span: name, kind, and the attributes `keys` picks. */
export function printSpanTree(spans: readonly CollectedSpan[], keys?: readonly string[]): string {
  const ids = new Set(spans.map((span) => span.spanId));
  const lines: string[] = [];
  const print = (span: CollectedSpan, depth: number) => {
    const attributes = Object.entries(span.attributes)
      .filter(([key]) => !keys || keys.includes(key))
      .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
      .join(' ');
    lines.push(
      `${'  '.repeat(depth)}${span.name} [${KINDS[span.kind] ?? span.kind}] ${attributes}`.trimEnd(),
    );
    for (const child of spans.filter((other) => other.parentSpanId === span.spanId)) print(child, depth + 1);
  };
  for (const root of spans.filter((span) => !ids.has(span.parentSpanId))) {
    lines.push(`trace ${root.traceId}${root.parentSpanId ? ` (parent ${root.parentSpanId})` : ''}`);
    print(root, 1);
  }
  return lines.join('\n');
}
