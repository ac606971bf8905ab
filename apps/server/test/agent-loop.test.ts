import { Agent, type AgentEvent, createAgent, createModel, RESULTS_PREFIX } from '@mci/agent';
import { answer, FAKE_PROVIDERS, startFakeOpenAi } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { GREET_BLOCK, toolFileDir } from './support/greet-tools.ts';
import { suiteServer } from './support/suite-server.ts';

// The agent loop of @mci/agent against a real server and fake providers driven through the real
// SDKs: blocks run while the model writes, results go back, the loop stops where it should.

const KEY = 'sk-loop-9f8e7d6c5b4a3210SECRET';
const tools = toolFileDir(
  'mci-agent-',
  "schemaVersion: '1.0'\ntools:\n  - name: greet\n    description: Greets\n    execution: { type: text, text: 'Hello from the tool!' }\n",
);

const suite = suiteServer({ file: tools.file }, () => tools[Symbol.dispose]());

const BLOCK = GREET_BLOCK;

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe.each(FAKE_PROVIDERS)('agent loop on %s', (provider, start) => {
  it('runs a block calling a tool while the answer streams, sends the results back, and answers', async () => {
    const afterBlock = gate();
    await using fake = await start(
      { chunks: ['Let me ', 'greet.\n\n', ...BLOCK.match(/.{1,5}/gs)!, afterBlock.promise, 'Done writing.'] },
      answer('The tool says: Hello from the tool!'),
    );
    const events: AgentEvent[] = [];
    let ranBeforeAnswerEnded = false;
    const agent = await createAgent({
      client: suite.client,
      model: `${provider}:fake-1`,
      baseURL: fake.url,
      apiKey: KEY,
      env: {},
      onEvent: (event) => {
        events.push(event);
        if (event.type === 'process' && event.state === 'idle') {
          // The block has finished; the model has not finished its answer yet.
          ranBeforeAnswerEnded = fake.lastTokenAt.length === 1;
          afterBlock.open();
        }
      },
    });
    expect(agent.prompt?.report.tools).toBe(1);
    const turn = await agent.send('Greet me, please.');

    expect(ranBeforeAnswerEnded).toBe(true);
    expect(turn).toMatchObject({
      reason: 'answered',
      steps: 2,
      answer: 'The tool says: Hello from the tool!',
    });
    expect(fake.requests).toHaveLength(2);
    const second = JSON.stringify(fake.requests[1]?.body);
    expect(second).toContain(JSON.stringify(RESULTS_PREFIX).slice(1, -1));
    expect(second).toContain('Hello from the tool!');
    expect(JSON.stringify(fake.requests[0]?.body)).toContain('greet(props?:');

    const types = events.map((event) => event.type);
    expect(types).toContain('token');
    expect(types).toContain('intent');
    expect(types).toContain('output');
    expect(types.filter((type) => type === 'step')).toHaveLength(2);
    expect(types.at(-1)).toBe('done');
    const step1 = events.find((event) => event.type === 'step');
    expect(step1).toMatchObject({
      step: 1,
      pids: [expect.any(Number)],
      results: expect.stringContaining('Hello'),
    });
    expect(agent.history.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'results',
      'assistant',
    ]);
    expect(JSON.stringify(events)).not.toContain('SECRET');
  });
});

describe('stop conditions', () => {
  const model = (url: string) => createModel('openai:fake-1', { baseURL: url, apiKey: KEY, env: {} });

  it('stops at once when the answer has no exec block', async () => {
    await using fake = await startFakeOpenAi(answer('Just text, no code.'));
    const agent = new Agent({ host: suite.client, model: await model(fake.url), system: 'sys' });
    const turn = await agent.send('hi');
    expect(turn).toMatchObject({ reason: 'answered', steps: 1 });
    expect(fake.requests).toHaveLength(1);
  });

  it('stops after maxSteps answers with blocks', async () => {
    await using fake = await startFakeOpenAi(answer(BLOCK), answer(BLOCK), answer(BLOCK));
    const agent = new Agent({ host: suite.client, model: await model(fake.url), system: 'sys', maxSteps: 2 });
    const turn = await agent.send('loop');
    expect(turn).toMatchObject({ reason: 'max-steps', steps: 2 });
    expect(fake.requests).toHaveLength(2);
  });

  // 900 + 95 counted tokens are under the budget; the results message to add is what passes it.
  it('stops when the next request would pass the context budget (from the usage fields)', async () => {
    await using fake = await startFakeOpenAi(
      answer(BLOCK, { usage: { input: 900, output: 95 } }),
      answer('x'),
    );
    const agent = new Agent({
      host: suite.client,
      model: await model(fake.url),
      system: 'sys',
      contextBudget: 1000,
    });
    const turn = await agent.send('go');
    expect(turn).toMatchObject({
      reason: 'context-budget',
      steps: 1,
      usage: { inputTokens: 900, outputTokens: 95 },
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('abort mid-answer kills the running process', async () => {
    const never = gate();
    await using fake = await startFakeOpenAi({
      chunks: ['Spinning:\n', '```ts exec=true\nwhile (true) {}\n```\n', never.promise, 'never sent'],
    });
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    let pid: number | undefined;
    const agent = new Agent({
      host: suite.client,
      model: await model(fake.url),
      system: 'sys',
      onEvent: (event) => {
        events.push(event);
        if (event.type === 'process' && event.state === 'running') {
          pid = event.pid;
          controller.abort();
        }
      },
    });
    const turn = await agent.send('spin', { signal: controller.signal });
    never.open();
    expect(turn).toMatchObject({ reason: 'canceled', steps: 1 });
    expect(pid).toBeDefined();
    const process = await suite.client.get(pid!);
    expect(process).toMatchObject({ state: 'idle', status: 'canceled' });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'canceled' });
  });

  it('ends with an error event naming provider, model and status, never the key', async () => {
    const failures = Array.from({ length: 3 }, () => ({
      status: 500,
      message: `upstream broke (key ${KEY})`,
      headers: { 'retry-after-ms': '1' },
    }));
    await using fake = await startFakeOpenAi(...failures);
    const events: AgentEvent[] = [];
    const agent = new Agent({
      host: suite.client,
      model: await model(fake.url),
      system: 'sys',
      onEvent: (e) => events.push(e),
    });
    const error = await agent.send('hi').catch((e: unknown) => e as Error);
    expect(error).toMatchObject({ code: 'MODEL_ERROR', status: 500 });
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      code: 'MODEL_ERROR',
      provider: 'openai',
      model: 'fake-1',
      status: 500,
      message: expect.stringMatching(/openai model fake-1 .*HTTP 500/),
    });
    expect(JSON.stringify(events)).not.toContain('SECRET');
    expect(String((error as Error).stack)).not.toContain('SECRET');
  });
});
