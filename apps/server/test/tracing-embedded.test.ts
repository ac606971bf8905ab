import { PassThrough } from 'node:stream';
import { answer, startFakeOpenAi } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { createServer } from '../src/server.ts';
import { startTracing, type Tracing } from '../src/tracing/start-tracing.ts';
import { GREET_BLOCK, greetToolDir } from './support/greet-tools.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { type OtlpCollector, startOtlpCollector } from './support/otlp-collector.ts';

// Traces of a server embedded with createServer after startTracing(): the model requests of a hosted
// conversation as GenAI spans, and the server's log lines joined to the spans by trace_id/span_id.
// The OTEL_* variables are this test file's own (each file runs in its own worker).

const KEY = 'sk-traced-00112233445566778899SECRET';
const { file: toolFile } = greetToolDir('mci-tracing-embedded-', 'Hello from the tool!');
const BLOCK = GREET_BLOCK;
let collector: OtlpCollector;
let tracing: Tracing | undefined;

beforeAll(async () => {
  collector = await startOtlpCollector();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  tracing = await startTracing();
});
afterAll(async () => {
  await tracing?.shutdown();
  await collector[Symbol.asyncDispose]();
});

describe('traces of an embedded server', () => {
  it('records model requests as GenAI spans with their usage, and puts trace ids in log lines', async () => {
    expect(tracing).toBeDefined();
    expect(await startTracing()).toBeDefined();
    await using fake = await startFakeOpenAi(
      answer(`Let me greet.\n\n${BLOCK}`, { usage: { input: 500, output: 30 } }),
      answer('The tool says: Hello from the tool!', { usage: { input: 600, output: 10 } }),
    );
    const logs: string[] = [];
    const destination = new PassThrough();
    destination.on('data', (chunk) => logs.push(String(chunk)));
    await using server = await createServer({
      port: 0,
      file: toolFile,
      logger: createLogger({ level: 'info', destination }),
      chat: {
        models: ['openai:fake-1'],
        modelOptions: { baseURL: fake.url, env: { OPENAI_API_KEY: KEY }, maxRetries: 0 },
      },
    });
    const client = await openJsonSocket(server.wsUrl);
    await client.request({ type: 'chat.start', message: 'Greet me, please.' });
    const done = await client.waitFor((m) => m.type === 'chat.done' || m.type === 'chat.error');
    expect(done.type).toBe('chat.done');
    client.close();

    const spans = await collector.waitFor(
      (all) =>
        all.filter((span) => span.name === 'chat fake-1').length === 2 &&
        all.some((span) => span.name === 'mci.run' && span.attributes['mci.run.status'] === 'success'),
    );
    const chats = spans.filter((span) => span.name === 'chat fake-1');
    expect(chats.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'fake-1',
        'gen_ai.usage.input_tokens': 500,
        'gen_ai.usage.output_tokens': 30,
        'server.address': '127.0.0.1',
      }),
      expect.objectContaining({ 'gen_ai.usage.input_tokens': 600, 'gen_ai.usage.output_tokens': 10 }),
    ]);
    expect(chats.every((span) => span.kind === 3)).toBe(true);
    // The turn is one trace: its model requests and its run under the chat.start request.
    const [start] = spans.filter((span) => span.name === 'chat.start');
    const turnRun = spans.find((span) => span.name === 'mci.run');
    expect(start).toMatchObject({ kind: 2, parentSpanId: '' });
    expect(new Set([...chats, turnRun].map((span) => span?.traceId))).toEqual(new Set([start!.traceId]));
    for (const body of collector.bodies) expect(body).not.toContain(KEY);

    // The run's transitions are logged in its span: the line names the run's trace and span.
    const run = spans.find((span) => span.name === 'mci.run')!;
    const pid = run.attributes['mci.process.pid'];
    const lines = logs
      .flatMap((chunk) => chunk.split('\n'))
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const idle = lines.find((line) => line.pid === pid && line.state === 'idle');
    expect(idle).toMatchObject({ trace_id: run.traceId, span_id: run.spanId });
    expect(lines.find((line) => line.msg === 'MCI server listening')).not.toHaveProperty('trace_id');
  });
});
