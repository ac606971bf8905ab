// The agent loop's own overhead: the time from the model's last token to the next model request
// starting, with a fake OpenAI server that answers at once (through the real `openai` SDK) and a
// block doing `output(1 + 1)`, against the process's own run time measured by the server in the same
// turns, against a bare `process.create` -> idle round trip of the same program, and against the
// floor of the SDK and HTTP alone (two model requests back to back).
// Target: under 5 ms beyond the process's own run time.
import { fileURLToPath } from 'node:url';
import { Agent, type AgentEvent, createModel } from '@mci/agent';
import { connect } from '@mci/client';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { answer, startFakeOpenAi } from '@mci/test-support';
import { createServer } from '../src/server.ts';

const BLOCK = 'Computing.\n\n```ts exec=true\noutput(1 + 1)\n```\n';
const TURNS = 300;
const WARMUP = 30;
const toolFile = fileURLToPath(new URL('../../../examples/transcripts/tools.mci.yaml', import.meta.url));

export default async function bench(): Promise<BenchResult[]> {
  await using server = await createServer({ port: 0, file: toolFile, logLevel: 'silent' });
  await using client = await connect(server.url);
  await using fake = await startFakeOpenAi();
  const model = await createModel('openai:fake-1', { baseURL: fake.url, apiKey: 'sk-bench', env: {} });
  let runMs = 0;
  const agent = new Agent({
    host: client,
    model,
    system: 'bench',
    onEvent: (event: AgentEvent) => {
      if (event.type === 'process' && event.state === 'idle') runMs = event.durationMs ?? 0;
    },
  });

  const gaps: number[] = [];
  const runs: number[] = [];
  for (let i = 0; i < WARMUP + TURNS; i++) {
    fake.script(answer(BLOCK, { size: 3 }), answer('It is 2.'));
    const first = fake.requests.length;
    agent.history.length = 0;
    const turn = await agent.send('What is 1 + 1?');
    if (turn.steps !== 2) throw new Error(`expected 2 steps, got ${turn.steps} (${turn.reason})`);
    if (i < WARMUP) continue;
    const lastToken = fake.lastTokenAt[first] ?? 0;
    const nextRequest = fake.requests[first + 1]?.at ?? 0;
    gaps.push(nextRequest - lastToken);
    runs.push(runMs);
  }

  // The same program as a bare process over the same connection: create, then wait until idle.
  const direct: number[] = [];
  for (let i = 0; i < WARMUP + TURNS; i++) {
    const t = performance.now();
    const created = await client.createProcess('output(1 + 1)');
    await client.wait(created.pid);
    if (i >= WARMUP) direct.push(performance.now() - t);
  }

  // The floor set by the SDK and HTTP alone: two model requests back to back, nothing in between.
  const sdkOnly: number[] = [];
  for (let i = 0; i < WARMUP + TURNS; i++) {
    fake.script(answer(BLOCK, { size: 3 }), answer('It is 2.'));
    const first = fake.requests.length;
    const request = {
      system: 'bench',
      messages: [{ role: 'user' as const, content: 'q' }],
      onToken: () => {},
    };
    await model.stream(request);
    await model.stream(request);
    if (i >= WARMUP) sdkOnly.push((fake.requests[first + 1]?.at ?? 0) - (fake.lastTokenAt[first] ?? 0));
  }

  const overhead = gaps.map((gap, i) => gap - (runs[i] ?? 0));
  const run50 = percentile(runs, 50);
  const direct50 = percentile(direct, 50);
  return [
    compared('agent loop: last token -> next request p50', percentile(gaps, 50), 'ms', {
      name: 'process run time p50',
      value: run50,
    }),
    compared('agent loop: last token -> next request p99', percentile(gaps, 99), 'ms', {
      name: 'process run time p99',
      value: percentile(runs, 99),
    }),
    {
      name: 'agent loop: overhead beyond the run p50',
      value: percentile(overhead, 50),
      unit: 'ms',
      target: '< 5 ms',
    },
    {
      name: 'agent loop: overhead beyond the run p99',
      value: percentile(overhead, 99),
      unit: 'ms',
      target: '< 5 ms',
    },
    compared('agent loop: last token -> next request p50 vs bare process', percentile(gaps, 50), 'ms', {
      name: 'process.create -> idle p50',
      value: direct50,
    }),
    compared('agent loop: overhead beyond the run p50 vs SDK floor', percentile(overhead, 50), 'ms', {
      name: 'SDK: last token -> next request, no MCI, p50',
      value: percentile(sdkOnly, 50),
    }),
  ];
}
