import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal, request } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { httpClient } from './support/mcp-fixture.ts';
import { type CollectedSpan, printSpanTree, startOtlpCollector } from './support/otlp-collector.ts';
import { type ServeProcess, serveProcesses } from './support/serve-process.ts';

// Traces through a whole `mci serve` started with the standard OTEL_* variables, exporting to a fake
// OTLP/HTTP collector (`http/json`) on 127.0.0.1, with a local service behind an http tool and a
// sandbox `fetch` that records the `traceparent` it receives.

const API_KEY = 'sk-trace-0123456789abcdefghijKLMN';
const PATH_SECRET = 'path-secret-9f8e7d6c5b4a3210';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const dir = mkdtempSync(join(tmpdir(), 'mci-tracing-'));
const loadHook = join(dirname(fileURLToPath(import.meta.url)), 'support/load-hook.mjs');
/** The trace headers of each request the service got, by path. */
const received: Array<{
  path: string;
  traceparent: string | undefined;
  tracestate: string | undefined;
  baggage: string | undefined;
}> = [];
let service: Server;
let serviceUrl = '';

beforeAll(async () => {
  service = createServer((req, res) => {
    const header = (name: string) => req.headers[name] as string | undefined;
    received.push({
      path: req.url ?? '',
      traceparent: header('traceparent'),
      tracestate: header('tracestate'),
      baggage: header('baggage'),
    });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true }));
  });
  serviceUrl = await listenLocal(service);
  writeFileSync(
    join(dir, 'tools.yaml'),
    `schemaVersion: '1.0'
tools:
  - name: lookup
    description: Asks the service, with a key in the URL.
    execution:
      type: http
      method: GET
      url: '{{env.SERVICE_URL}}/lookup/{{env.PATH_SECRET}}?api_key={{env.API_KEY}}'
`,
  );
  writeFileSync(
    join(dir, 'config.yaml'),
    `file: tools.yaml\nallowNet: ['127.0.0.1']\npublicEnv: [SERVICE_URL]\n`,
  );
});
afterAll(() => {
  service?.close();
  rmSync(dir, { recursive: true, force: true });
});

const { serve } = serveProcesses(dir);
/** A second server's directory: its tools are the MCP tools of a server started from `dir`. */
const edge = join(dir, 'edge');
mkdirSync(edge);
const { serve: serveEdge } = serveProcesses(edge);
const env = () => ({ API_KEY, PATH_SECRET, SERVICE_URL: serviceUrl, NODE_OPTIONS: `--import=${loadHook}` });
const otel = (endpoint: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: 'mci-under-test',
  OTEL_BSP_SCHEDULE_DELAY: '50',
});
/**
 * `mci serve` of `dir` on an in-memory database, exporting its spans to `collectorUrl`; `extra` over
 * its environment.
 */
const tracedServer = (collectorUrl: string, extra: Record<string, string> = {}) =>
  serve(['--config', 'config.yaml', '--db', ':memory:'], { ...env(), ...otel(collectorUrl), ...extra });
/** Ends `server` with SIGTERM and expects a clean exit. */
async function stop(server: ServeProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}
const program = (path: string) => `
const found = await tools.lookup({});
const response = await fetch(${JSON.stringify(`${serviceUrl}${path}`)});
console.log(JSON.stringify({ tool: found.isError === true, fetch: response.status }));
`;

const traceparentOf = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
const ofRun = (spans: CollectedSpan[], pid: number) =>
  spans.find((span) => span.name === 'mci.run' && span.attributes['mci.process.pid'] === pid);

describe('traces', { timeout: 60_000 }, () => {
  it('continues the caller trace through the run, its tool call and fetch, into the service behind them', async () => {
    await using collector = await startOtlpCollector();
    const server = tracedServer(collector.url);
    const url = await server.url;
    expect(server.stderr()).toContain('[load-hook] loaded @opentelemetry/sdk-node');

    const response = await fetch(`${url}/processes`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: traceparentOf(CALLER_TRACE, CALLER_SPAN),
        tracestate: 'caller=1',
        baggage: 'user.secret=caller-baggage-value',
      },
      body: JSON.stringify({ code: program('/fetched'), block: true }),
    });
    const done = (await response.json()) as { pid: number; status: string; stdout: string };
    expect(done).toMatchObject({ status: 'success' });
    expect(JSON.parse(done.stdout)).toEqual({ tool: false, fetch: 200 });

    const spans = await collector.waitFor(
      (all) =>
        ['POST /processes', 'mci.run', 'mci.sandbox.execute', 'execute_tool lookup'].every((name) =>
          all.some((span) => span.name === name),
        ) && all.filter((span) => span.name === 'GET').length >= 2,
    );
    const trace = spans.filter((span) => span.traceId === CALLER_TRACE);
    const byName = (name: string) => trace.filter((span) => span.name === name);
    const [requestSpan] = byName('POST /processes');
    const [run] = byName('mci.run');
    const [execution] = byName('mci.sandbox.execute');
    const [tool] = byName('execute_tool lookup');
    expect(requestSpan).toMatchObject({
      parentSpanId: CALLER_SPAN,
      kind: 2,
      service: 'mci-under-test',
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/processes',
        'http.response.status_code': 201,
      },
    });
    expect(run).toMatchObject({
      parentSpanId: requestSpan!.spanId,
      attributes: {
        'mci.process.pid': done.pid,
        'mci.run': 1,
        'mci.run.status': 'success',
        'mci.principal': expect.any(String),
      },
      events: expect.arrayContaining(['running']),
    });
    expect(run!.attributes['mci.run.queue_wait_ms']).toBeGreaterThanOrEqual(0);
    expect(execution).toMatchObject({
      parentSpanId: run!.spanId,
      attributes: { 'mci.run.status': 'success' },
    });
    expect(tool).toMatchObject({
      parentSpanId: execution!.spanId,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup',
        'mci.tool.type': 'http',
        'mci.policy.decision': 'allow',
      },
    });
    // The http tool's own client span, and the fetch's, each the parent the service was told of.
    const toolHttp = trace.find((span) => span.name === 'GET' && span.parentSpanId === tool!.spanId);
    const fetchHttp = trace.find((span) => span.name === 'GET' && span.parentSpanId === execution!.spanId);
    expect(toolHttp).toMatchObject({ kind: 3, attributes: { 'http.response.status_code': 200 } });
    expect(fetchHttp).toMatchObject({
      kind: 3,
      attributes: { 'url.full': `${serviceUrl}/fetched`, 'http.response.status_code': 200 },
    });
    // Without a fetch rule the egress rules decide (allowNet here).
    expect(fetchHttp!.attributes['mci.policy.decision']).toMatch(/^(allow|egress)$/);
    const lookup = received.find((got) => got.path.startsWith('/lookup/'));
    const fetched = received.find((got) => got.path === '/fetched');
    expect(lookup?.traceparent).toBe(traceparentOf(CALLER_TRACE, toolHttp!.spanId));
    expect(fetched?.traceparent).toBe(traceparentOf(CALLER_TRACE, fetchHttp!.spanId));
    // The caller's tracestate goes on; its baggage does not.
    expect(fetched?.tracestate).toBe('caller=1');
    expect(fetched?.baggage).toBeUndefined();

    // The secrets of the tool's URL are in no attribute: redacted where they were.
    expect(toolHttp!.attributes['url.full']).toBe(`${serviceUrl}/lookup/[redacted:PATH_SECRET]?api_key=***`);
    for (const body of collector.bodies) {
      expect(body).not.toContain(API_KEY);
      expect(body).not.toContain(PATH_SECRET);
      // Nor the command line (it may hold a database URL with its password).
      expect(body).not.toContain('process.command_args');
      expect(body).not.toContain('config.yaml');
    }
    console.log(
      printSpanTree(trace, [
        'http.route',
        'http.response.status_code',
        'mci.process.pid',
        'mci.run.status',
        'mci.tool.type',
        'mci.policy.decision',
        'url.full',
      ]),
    );
    await stop(server);
  });

  it('starts a new trace for a malformed traceparent, and answers as usual', async () => {
    await using collector = await startOtlpCollector();
    const server = tracedServer(collector.url);
    const url = await server.url;
    const pids: number[] = [];
    for (const traceparent of [
      'not-a-traceparent',
      `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
      `00-${CALLER_TRACE}-${CALLER_SPAN}-01-extra`,
      `zz-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      'x'.repeat(8000),
    ]) {
      const response = await fetch(`${url}/processes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent, tracestate: '=,=,a=b=c,,' },
        body: JSON.stringify({ code: 'console.log(1)', block: true }),
      });
      expect(response.status).toBe(201);
      pids.push(((await response.json()) as { pid: number }).pid);
    }
    const spans = await collector.waitFor((all) => pids.every((pid) => ofRun(all, pid)));
    for (const pid of pids) {
      const run = ofRun(spans, pid)!;
      expect(run.traceId).not.toBe(CALLER_TRACE);
      expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
      const parent = spans.find((span) => span.spanId === run.parentSpanId);
      expect(parent).toMatchObject({ name: 'POST /processes', parentSpanId: '' });
    }
    expect((await request(url, 'GET', '/healthz')).status).toBe(200);
    await stop(server);
  });

  it('continues the trace of a WebSocket process.create and stream.start, and of MCP params._meta', async () => {
    await using collector = await startOtlpCollector();
    const server = tracedServer(collector.url);
    const url = await server.url;
    const [wsTrace, streamTrace, mcpTrace] = ['1', '2', '3'].map((digit) => digit.repeat(32));
    const ws = await openJsonSocket(`${url.replace('http', 'ws')}/ws`);
    const created = await ws.request({
      type: 'process.create',
      code: 'console.log(1)',
      traceparent: traceparentOf(wsTrace!, CALLER_SPAN),
      tracestate: 'caller=ws',
    });
    const wsPid = created.result.process.pid as number;
    // Ignored when malformed; refused (VALIDATION, the connection goes on) when over its length.
    const garbled = await ws.request({
      type: 'process.create',
      code: 'console.log(2)',
      traceparent: 'garbage',
    });
    const tooLong = await ws.request({
      type: 'process.create',
      code: 'console.log(3)',
      traceparent: `00-${'a'.repeat(300)}`,
    });
    expect(tooLong).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'traceparent' });
    await ws.request({
      type: 'stream.start',
      streamId: 'turn-1',
      traceparent: traceparentOf(streamTrace!, CALLER_SPAN),
    });
    await ws.request({ type: 'stream.chunk', streamId: 'turn-1', text: '```ts exec\nconsole.log(4)\n```\n' });
    await ws.request({ type: 'stream.end', streamId: 'turn-1' });
    await ws.waitFor((message) => message.type === 'stream.result');
    ws.close();

    const mcp = await httpClient(`${url}/mcp`);
    await mcp.callTool({
      name: 'run_code',
      arguments: { code: 'console.log(5)' },
      _meta: { traceparent: traceparentOf(mcpTrace!, CALLER_SPAN) },
    });
    // A _meta whose trace fields are not strings is ignored: the call is answered as usual.
    const odd = await mcp.callTool({
      name: 'run_code',
      arguments: { code: 'console.log(6)' },
      _meta: { traceparent: { nested: true }, tracestate: 12 },
    });
    expect(odd.isError).not.toBe(true);
    await mcp.close();

    const spans = await collector.waitFor(
      (all) =>
        [wsTrace, streamTrace, mcpTrace].every((id) =>
          all.some((span) => span.traceId === id && span.name === 'mci.run'),
        ) && Boolean(ofRun(all, garbled.result.process.pid)),
    );
    const runIn = (traceId: string) =>
      spans.find((span) => span.traceId === traceId && span.name === 'mci.run')!;
    const parentOf = (span: CollectedSpan) => spans.find((other) => other.spanId === span.parentSpanId);
    expect(runIn(wsTrace!).attributes['mci.process.pid']).toBe(wsPid);
    expect(parentOf(runIn(wsTrace!))).toMatchObject({
      name: 'process.create',
      kind: 2,
      parentSpanId: CALLER_SPAN,
    });
    expect(parentOf(runIn(streamTrace!))).toMatchObject({ name: 'stream.start', parentSpanId: CALLER_SPAN });
    expect(runIn(streamTrace!).attributes['mci.stream.id']).toBe('turn-1');
    expect(parentOf(runIn(mcpTrace!))).toMatchObject({
      name: 'tools/call run_code',
      parentSpanId: CALLER_SPAN,
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'run_code' },
    });
    const garbledRun = ofRun(spans, garbled.result.process.pid)!;
    expect(parentOf(garbledRun)).toMatchObject({ name: 'process.create', parentSpanId: '' });
    await stop(server);
  });

  it("carries the trace into an MCP tool's server through params._meta, and records a denied call", {
    timeout: 90_000,
  }, async () => {
    await using collector = await startOtlpCollector();
    // The upstream: the server of the first test, reached over MCP as the tools of a second server.
    const upstream = tracedServer(collector.url, { OTEL_SERVICE_NAME: 'upstream' });
    const upstreamUrl = await upstream.url;
    writeFileSync(
      join(edge, 'tools.yaml'),
      `schemaVersion: '1.0'\nmcp_servers:\n  upstream: { type: http, url: '${upstreamUrl}/mcp' }\n`,
    );
    writeFileSync(
      join(edge, 'config.yaml'),
      'file: tools.yaml\npolicies:\n  - { tool: run_code, decision: deny }\n',
    );
    const server = serveEdge(['--config', 'config.yaml', '--db', ':memory:'], {
      ...env(),
      ...otel(collector.url),
      OTEL_SERVICE_NAME: 'edge',
    });
    const url = await server.url;
    const response = await fetch(`${url}/processes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparentOf(CALLER_TRACE, CALLER_SPAN) },
      body: JSON.stringify({
        code: `const found = await tools.lookup({});
let denied = '';
try { await tools.run_code({ code: 'console.log(1)' }); } catch (error) { denied = error.code; }
console.log(JSON.stringify({ tool: found.isError === true, denied }));`,
        block: true,
      }),
    });
    const done = (await response.json()) as { status: string; stdout: string };
    expect(done).toMatchObject({ status: 'success' });
    expect(JSON.parse(done.stdout)).toEqual({ tool: false, denied: 'POLICY_DENIED' });

    const spans = await collector.waitFor(
      (all) =>
        all.some((span) => span.service === 'upstream' && span.name === 'tools/call lookup') &&
        all.some((span) => span.service === 'edge' && span.name === 'execute_tool run_code'),
    );
    const trace = spans.filter((span) => span.traceId === CALLER_TRACE);
    const edgeTool = trace.find((span) => span.service === 'edge' && span.name === 'execute_tool lookup')!;
    expect(edgeTool.attributes).toMatchObject({ 'mci.tool.type': 'mcp', 'mci.policy.decision': 'allow' });
    const mcpCall = trace.find((span) => span.parentSpanId === edgeTool.spanId)!;
    expect(mcpCall).toMatchObject({
      name: 'tools/call lookup',
      kind: 3,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'lookup',
        'mci.mcp.server': 'upstream',
      },
    });
    // The upstream's server span of the call is the child of the edge's client span.
    const upstreamCall = trace.find(
      (span) => span.service === 'upstream' && span.name === 'tools/call lookup',
    );
    expect(upstreamCall).toMatchObject({ kind: 2, parentSpanId: mcpCall.spanId });
    expect(
      trace.some((span) => span.service === 'upstream' && span.parentSpanId === upstreamCall!.spanId),
    ).toBe(true);
    const denied = trace.find((span) => span.name === 'execute_tool run_code')!;
    expect(denied).toMatchObject({
      attributes: {
        'mci.policy.decision': 'deny',
        'mci.error.code': 'POLICY_DENIED',
        'error.type': 'POLICY_DENIED',
      },
      status: { code: 2 },
    });
    console.log(printSpanTree(trace, ['mci.tool.type', 'mci.policy.decision', 'mci.error.code']));
    await Promise.all([stop(server), stop(upstream)]);
  });

  it('exports nothing and loads no SDK without OTEL_* variables', async () => {
    await using collector = await startOtlpCollector();
    // Shaping variables alone (and a collector listening) do not turn tracing on.
    const server = serve(['--config', 'config.yaml', '--db', ':memory:'], {
      ...env(),
      OTEL_SERVICE_NAME: 'mci-under-test',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      MCI_LOG_LEVEL: 'info',
      MCI_LOG_FORMAT: 'json',
    });
    const url = await server.url;
    received.length = 0;
    const response = await fetch(`${url}/processes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparentOf(CALLER_TRACE, CALLER_SPAN) },
      body: JSON.stringify({ code: program('/untraced'), block: true }),
    });
    expect(await response.json()).toMatchObject({ status: 'success' });
    await stop(server);
    // The API and the attribute names only: no SDK, exporter or context manager.
    const loaded = new Set(server.stderr().match(/(?<=\[load-hook\] loaded )\S+/g) ?? []);
    expect([...loaded]).toEqual(['@opentelemetry/semantic-conventions']);
    expect(collector.bodies).toEqual([]);
    // Log lines are written as ever, without trace fields.
    const lines = server
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(lines.find((line) => line.msg === 'process 1 idle (success)')).toBeDefined();
    expect(lines.some((line) => 'trace_id' in line)).toBe(false);
    expect(received.map((got) => got.traceparent)).toEqual([undefined, undefined]);
  });
});
