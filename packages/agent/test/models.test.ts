import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createModel, ModelError, parseTranscript } from '../src/index.ts';
import { answer, startFakeAnthropic, startFakeOpenAi } from '@mci/test-support';

// The adapters driven through the real `openai` and `@anthropic-ai/sdk` clients against fake servers
// speaking each provider's streaming wire format.

const KEY = 'sk-test-0123456789abcdefSECRET';
const noEnv = {};

async function collect(model: Awaited<ReturnType<typeof createModel>>, prompt = 'hi') {
  const tokens: string[] = [];
  const result = await model.stream({
    system: 'be brief',
    messages: [{ role: 'user', content: prompt }],
    onToken: (text) => tokens.push(text),
  });
  return { tokens, result };
}

describe.each([
  ['openai', startFakeOpenAi],
  ['anthropic', startFakeAnthropic],
] as const)('%s adapter', (provider, start) => {
  it('streams tokens in order and reports usage and the finish reason', async () => {
    await using fake = await start(answer('Hello there, world', { usage: { input: 42, output: 7 } }));
    const model = await createModel(`${provider}:m-1`, { baseURL: fake.url, apiKey: KEY, env: noEnv });
    const { tokens, result } = await collect(model);
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.join('')).toBe('Hello there, world');
    expect(result).toMatchObject({
      text: 'Hello there, world',
      usage: { inputTokens: 42, outputTokens: 7 },
      finishReason: provider === 'openai' ? 'stop' : 'end_turn',
    });
    const [request] = fake.requests;
    expect(request?.body).toMatchObject({ model: 'm-1', stream: true });
    if (provider === 'openai') {
      expect(request?.body.messages).toEqual([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ]);
      expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    } else {
      expect(request?.body).toMatchObject({
        system: 'be brief',
        messages: [{ role: 'user', content: 'hi' }],
      });
      // SDK 1.x sends the key as a Bearer token; earlier ones as x-api-key.
      expect(request?.headers['x-api-key'] ?? request?.headers.authorization).toContain(KEY);
    }
  });

  it('retries a 429 through the SDK, then answers', async () => {
    await using fake = await start(
      { status: 429, message: 'slow down', headers: { 'retry-after-ms': '10' } },
      answer('ok'),
    );
    const model = await createModel(`${provider}:m-1`, { baseURL: fake.url, apiKey: KEY, env: noEnv });
    const { result } = await collect(model);
    expect(result.text).toBe('ok');
    expect(fake.requests).toHaveLength(2);
  });

  it('reports a 500 naming provider, model and status, without the key', async () => {
    await using fake = await start(
      ...Array.from({ length: 3 }, () => ({
        status: 500,
        message: `internal failure for key ${KEY}`,
        headers: { 'retry-after-ms': '1' },
      })),
    );
    const model = await createModel(`${provider}:m-1`, { baseURL: fake.url, apiKey: KEY, env: noEnv });
    const error = await collect(model).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'MODEL_ERROR', provider, model: 'm-1', status: 500 });
    const message = (error as Error).message;
    expect(message).toContain(`${provider} model m-1`);
    expect(message).toContain('HTTP 500');
    expect(message).not.toContain('SECRET');
    expect(JSON.stringify(error)).not.toContain('SECRET');
    expect(fake.requests).toHaveLength(3); // the first try and the SDK's 2 retries
  });

  it('reports an unreachable endpoint as MODEL_UNREACHABLE', async () => {
    const fake = await start();
    await fake.close();
    const model = await createModel(`${provider}:m-1`, {
      baseURL: fake.url,
      apiKey: KEY,
      env: noEnv,
      maxRetries: 0,
    });
    await expect(collect(model)).rejects.toMatchObject({ code: 'MODEL_UNREACHABLE', provider });
  });
});

describe('createModel', () => {
  it('names the variable to set when a key is missing', async () => {
    await expect(createModel('openai:gpt-4.1-mini', { env: {} })).rejects.toThrow(
      /openai model gpt-4.1-mini needs an API key: set OPENAI_API_KEY/,
    );
    await expect(createModel('anthropic:claude-sonnet-4-5', { env: {} })).rejects.toMatchObject({
      code: 'MISSING_KEY',
    });
    await expect(createModel('openrouter:x/y', { env: {} })).rejects.toThrow(/MCI_MODEL_API_KEY/);
  });

  it('rejects names that are not provider:model', async () => {
    await expect(createModel('gpt-4', {})).rejects.toMatchObject({ code: 'BAD_MODEL' });
    await expect(createModel('nope:x', {})).rejects.toThrow(/unknown provider "nope"/);
  });

  it('takes the endpoint from the option, then the SDK variable, then the default', async () => {
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'http://127.0.0.1:9/env' };
    expect((await createModel('openai:m', { env, baseURL: 'http://127.0.0.1:9/opt' })).endpoint).toBe(
      'http://127.0.0.1:9/opt',
    );
    expect((await createModel('openai:m', { env })).endpoint).toBe('http://127.0.0.1:9/env');
    expect((await createModel('openai:m', { env: { OPENAI_API_KEY: KEY } })).endpoint).toBe(
      'https://api.openai.com/v1',
    );
    expect(
      (await createModel('anthropic:m', { env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'http://a' } }))
        .endpoint,
    ).toBe('http://a');
    expect((await createModel('ollama:qwen3', { env: {} })).endpoint).toBe('http://127.0.0.1:11434/v1');
  });

  it('ollama needs no key', async () => {
    await using fake = await startFakeOpenAi(answer('local'));
    const model = await createModel('ollama:qwen3', { baseURL: fake.url, env: {} });
    expect((await collect(model)).result.text).toBe('local');
  });
});

describe('replay model', () => {
  it('plays one ## assistant section per answer, token by token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mci-replay-'));
    const file = join(dir, 't.md');
    writeFileSync(
      file,
      '# Demo\n\n## user\nhi\n\n## assistant\nFirst answer.\n\n## assistant\nSecond one.\n',
    );
    const model = await createModel(`replay:${file}`, { tokensPerSecond: 0 });
    const first = await collect(model);
    expect(first.tokens.length).toBeGreaterThan(2);
    expect(first.result.text).toBe('First answer.');
    const second = await model.stream({
      system: '',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'First answer.' },
        { role: 'user', content: 'more' },
      ],
      onToken: () => {},
    });
    expect(second.text).toBe('Second one.');
  });

  it('reads a transcript without headings as one answer', () => {
    expect(parseTranscript('Some text\n\n```ts exec=true\noutput(1)\n```\n')).toEqual([
      'Some text\n\n```ts exec=true\noutput(1)\n```',
    ]);
  });

  it('names a missing transcript', async () => {
    await expect(createModel('replay:/nonexistent/t.md')).rejects.toMatchObject({ code: 'TRANSCRIPT' });
  });
});
