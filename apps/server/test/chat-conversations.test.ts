import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { answer, type FakeProvider, startFakeOpenAi } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { createServer, type MciServer } from '../src/server.ts';
import { GREET_BLOCK, greetToolDir } from './support/greet-tools.ts';
import { type Json, openJsonSocket } from './support/json-socket.ts';

// Server-hosted conversations over the real WebSocket protocol: the server runs the loop with a key
// from its own environment, streams chat.* events and the turn's stream events, stores every message
// in the process database, and keeps conversations across a restart.

const KEY = 'sk-hosted-00112233445566778899SECRET';
const { dir, file: toolFile } = greetToolDir('mci-chat-', 'Hello from the tool!');
const BLOCK = GREET_BLOCK;

/** Starts a server on `db` hosting `openai:fake-1` at `fake`, its logs collected into `logs`. */
async function start(
  fake: FakeProvider,
  db: string,
  logs: string[],
  tokens?: Array<{ token: string; role: 'client' | 'operator'; id: string }>,
) {
  const destination = new PassThrough();
  destination.on('data', (chunk) => logs.push(String(chunk)));
  return createServer({
    port: 0,
    check: 'off',
    file: toolFile,
    db,
    logger: createLogger({ level: 'debug', destination }),
    concurrency: 1,
    ...(tokens && { tokens }),
    chat: {
      models: ['openai:fake-1'],
      modelOptions: { baseURL: fake.url, env: { OPENAI_API_KEY: KEY }, maxRetries: 0 },
    },
  });
}

const ALICE = 'alice-token-123';
const BOB = 'bob-token-456';
const CAROL = 'carol-token-789';
const DAVE = 'dave-token-012';
const ERIN = 'erin-token-345';

describe('server-hosted conversations', () => {
  // The tests that need no options of their own share one server and one fake model: each scripts
  // its answers and speaks as a principal of its own.
  const sharedLogs: string[] = [];
  let sharedFake: FakeProvider;
  let shared: MciServer;
  beforeAll(async () => {
    sharedFake = await startFakeOpenAi();
    shared = await start(sharedFake, ':memory:', sharedLogs, [
      { token: ALICE, role: 'client', id: 'alice' },
      { token: BOB, role: 'client', id: 'bob' },
      { token: CAROL, role: 'client', id: 'carol' },
      { token: DAVE, role: 'client', id: 'dave' },
      { token: ERIN, role: 'client', id: 'erin' },
    ]);
  });
  afterAll(async () => {
    await shared?.close({ graceMs: 0 });
    await sharedFake?.close();
  });

  it('runs a turn, streams chat.* and stream events, stores messages linked to pids, and survives a restart', async () => {
    await using fake = await startFakeOpenAi(
      answer(`Let me greet.\n\n${BLOCK}`, { usage: { input: 500, output: 30 } }),
      answer('The tool says: Hello from the tool!', { usage: { input: 600, output: 10 } }),
    );
    const db = join(dir, 'restart.db');
    const logs: string[] = [];
    let server = await start(fake, db, logs);
    let conversationId: string;
    let pid: number;
    try {
      const models = await (await fetch(`${server.url}/models`)).json();
      expect(models).toEqual({
        models: [{ name: 'openai:fake-1', provider: 'openai', model: 'fake-1', default: true }],
      });

      const client = await openJsonSocket(server.wsUrl);
      const started = await client.request({ type: 'chat.start', message: 'Greet me, please.' });
      expect(started).toMatchObject({
        type: 'reply',
        request: 'chat.start',
        result: {
          conversation: { title: 'Greet me, please.', model: 'openai:fake-1' },
          message: { role: 'user' },
        },
      });
      conversationId = started.result.conversation.conversationId;
      const done = await client.waitFor((m) => m.type === 'chat.done' || m.type === 'chat.error');
      expect(done).toEqual({
        type: 'chat.done',
        conversationId,
        reason: 'answered',
        steps: 2,
        usage: { inputTokens: 1100, outputTokens: 40 },
      });
      const types = client.messages.map((m) => m.type);
      expect(types).toContain('chat.token');
      expect(types).toContain('intent');
      expect(types).toContain('process');
      expect(types).toContain('output');
      expect(types).toContain('stream.result');
      const steps = client.messages.filter((m) => m.type === 'chat.step');
      expect(steps).toHaveLength(2);
      expect(steps[0]).toMatchObject({
        step: 1,
        message: { role: 'assistant', usage: { inputTokens: 500, outputTokens: 30 } },
        results: { role: 'results', text: expect.stringContaining('Hello from the tool!') },
      });
      pid = steps[0]?.message.pids[0];
      expect(pid).toEqual(expect.any(Number));
      const tokens = client.messages
        .filter((m) => m.type === 'chat.token' && m.step === 1)
        .map((m) => m.text);
      expect(tokens.join('')).toBe(`Let me greet.\n\n${BLOCK}`);
      expect(JSON.stringify(fake.requests[1]?.body)).toContain('Results of your code:');
      client.close();
    } finally {
      await server.close({ graceMs: 0 });
    }

    server = await start(fake, db, logs);
    try {
      const client = await openJsonSocket(server.wsUrl);
      const listed = await client.request({ type: 'chat.list' });
      expect(listed.result.conversations).toEqual([
        expect.objectContaining({ conversationId, messageCount: 4, running: false }),
      ]);
      const got = await client.request({ type: 'chat.get', conversationId });
      expect(got.result.messages.map((m: Json) => m.role)).toEqual([
        'user',
        'assistant',
        'results',
        'assistant',
      ]);
      expect(got.result.messages[1]).toMatchObject({ pids: [pid], model: 'openai:fake-1', step: 1 });
      expect(got.result.models).toHaveLength(1);
      const process = await (await fetch(`${server.url}/processes/${pid}`)).json();
      expect(process).toMatchObject({
        pid,
        ref: `chat-${conversationId}`,
        session: conversationId,
        status: 'success',
      });

      const renamed = await client.request({ type: 'chat.rename', conversationId, title: 'Greetings' });
      expect(renamed.result.conversation.title).toBe('Greetings');
      expect(await client.request({ type: 'chat.delete', conversationId })).toMatchObject({
        result: { conversationId },
      });
      expect(await client.request({ type: 'chat.get', conversationId })).toMatchObject({
        type: 'error',
        code: 'NOT_FOUND',
        path: 'conversationId',
      });
      client.close();
    } finally {
      await server.close({ graceMs: 0 });
    }
    expect(logs.join('')).not.toContain('SECRET');
  });

  it("chat.cancel aborts the model and kills the turn's running process", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    sharedFake.script({
      chunks: ['Spin:\n', '```ts exec=true\nwhile (true) {}\n```\n', held, 'more'],
    });
    const server = shared;
    const client = await openJsonSocket(server.wsUrl, CAROL);
    const started = await client.request({ type: 'chat.start', message: 'spin' });
    const { conversationId } = started.result.conversation;
    const running = await client.waitFor((m) => m.type === 'process' && m.state === 'running');
    expect(await client.request({ type: 'chat.start', conversationId, message: 'again' })).toMatchObject({
      type: 'error',
      code: 'CONFLICT',
    });
    expect(await client.request({ type: 'chat.cancel', conversationId })).toMatchObject({
      result: { conversationId, canceled: true },
    });
    const done = await client.waitFor((m) => m.type === 'chat.done');
    release();
    expect(done).toMatchObject({ reason: 'canceled' });
    const process = await (
      await fetch(`${server.url}/processes/${running.pid}`, { headers: { Authorization: `Bearer ${CAROL}` } })
    ).json();
    expect(process).toMatchObject({ state: 'idle', status: 'canceled' });
    const got = await client.request({ type: 'chat.get', conversationId });
    expect(got.result.messages.map((m: Json) => m.role)).toEqual(['user', 'assistant']);
    expect(got.result.messages[1].pids).toEqual([running.pid]);
    client.close();
  });

  it('reports a model failure as chat.error naming provider, model and status, without the key', async () => {
    sharedFake.script({
      status: 500,
      message: `boom with ${KEY}, or ${KEY.slice(3)}`,
    });
    const logsBefore = sharedLogs.length;
    const client = await openJsonSocket(shared.wsUrl, DAVE);
    await client.request({ type: 'chat.start', message: 'hi' });
    const error = await client.waitFor((m) => m.type === 'chat.error');
    expect(error).toMatchObject({ code: 'MODEL_ERROR', provider: 'openai', model: 'fake-1', status: 500 });
    expect(error.message).toMatch(/openai model fake-1 .*HTTP 500/);
    expect(JSON.stringify(client.messages)).not.toContain('SECRET');
    expect(sharedLogs.join('')).not.toContain('SECRET');
    expect(sharedLogs.slice(logsBefore).join('')).toContain('chat turn failed');
    client.close();
  });

  it('keeps the key and the credentials of the model URL out of errors, messages and logs', async () => {
    // The service echoes the key without its prefix; the URL carries a password and an api_key.
    await using fake = await startFakeOpenAi({ status: 500, message: `bad key ${KEY.slice(3)}` });
    const password = 'url-password-0a1b2c3d';
    const apiKey = 'query-key-9z8y7x6w5v';
    const endpoint = new URL(fake.url);
    endpoint.username = 'bob';
    endpoint.password = password;
    endpoint.searchParams.set('api_key', apiKey);
    const destination = new PassThrough();
    const logs: string[] = [];
    destination.on('data', (chunk) => logs.push(String(chunk)));
    await using server = await createServer({
      port: 0,
      check: 'off',
      file: toolFile,
      logger: createLogger({ level: 'debug', destination }),
      concurrency: 1,
      chat: {
        models: ['openai:fake-1'],
        modelOptions: { baseURL: endpoint.href, env: { OPENAI_API_KEY: KEY }, maxRetries: 0 },
      },
    });
    const client = await openJsonSocket(server.wsUrl);
    const started = await client.request({ type: 'chat.start', message: `my key is ${KEY}, keep it` });
    await client.waitFor((m) => m.type === 'chat.error');
    const got = await client.request({
      type: 'chat.get',
      conversationId: started.result.conversation.conversationId,
    });
    expect(got.result.messages[0].text).toBe('my key is [redacted:OPENAI_API_KEY], keep it');
    const everything = JSON.stringify(client.messages) + logs.join('');
    for (const secret of [KEY.slice(3, 15), KEY.slice(-12), password, apiKey])
      expect(everything).not.toContain(secret);
    client.close();
  });

  it('chat.get pages a long conversation over the WebSocket: the newest 200, then the older ones by cursor', {
    timeout: 60_000,
  }, async () => {
    sharedFake.script(...Array.from({ length: 105 }, () => answer('ok', { size: 8 })));
    const client = await openJsonSocket(shared.wsUrl, ERIN);
    let conversationId: string | undefined;
    for (let i = 0; i < 105; i++) {
      const started = await client.request({
        type: 'chat.start',
        message: `message ${i}`,
        ...(conversationId && { conversationId }),
      });
      conversationId = started.result.conversation.conversationId;
      await client.waitFor(
        (m) =>
          m.type === 'chat.done' && client.messages.filter((x) => x.type === 'chat.done').length === i + 1,
      );
    }
    const first = await client.request({ type: 'chat.get', conversationId });
    expect(first.result.messages).toHaveLength(200);
    expect(first.result.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'ok' });
    expect(first.result.nextCursor).toBe(first.result.messages[0].id);
    const older = await client.request({ type: 'chat.get', conversationId, before: first.result.nextCursor });
    expect(older.result.messages).toHaveLength(10);
    expect(older.result.messages[0]).toMatchObject({ role: 'user', text: 'message 0' });
    expect(older.result.nextCursor).toBeUndefined();
    const bad = await client.request({ type: 'chat.get', conversationId, limit: 0 });
    expect(bad).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'limit' });
    client.close();
  });

  it("the chat.start reply comes before the turn's first event, even from a model without pauses", async () => {
    const transcript = join(dir, 'instant.md');
    writeFileSync(transcript, `## assistant\nAt once.\n\n${BLOCK}\n## assistant\nDone.\n`);
    await using server = await createServer({
      port: 0,
      check: 'off',
      file: toolFile,
      logLevel: 'silent',
      concurrency: 1,
      chat: { models: [`replay:${transcript}`], modelOptions: { tokensPerSecond: 0 } },
    });
    const client = await openJsonSocket(server.wsUrl);
    const reply = await client.request({ type: 'chat.start', message: 'go' });
    await client.waitFor((m) => m.type === 'chat.done');
    const turn = client.messages.filter((m) => m.type !== 'hello');
    expect(turn[0]).toBe(reply);
    expect(turn.at(-1)).toMatchObject({ type: 'chat.done', reason: 'answered', steps: 2 });
    client.close();
  });

  it('a conversation belongs to the principal that started it', async () => {
    sharedFake.script(answer('hello'));
    const alice = await openJsonSocket(shared.wsUrl, ALICE);
    const bob = await openJsonSocket(shared.wsUrl, BOB);
    const started = await alice.request({ type: 'chat.start', message: 'mine' });
    const { conversationId } = started.result.conversation;
    await alice.waitFor((m) => m.type === 'chat.done');
    expect((await bob.request({ type: 'chat.list' })).result.conversations).toEqual([]);
    for (const type of ['chat.get', 'chat.cancel', 'chat.delete']) {
      expect(await bob.request({ type, conversationId })).toMatchObject({ type: 'error', code: 'NOT_FOUND' });
    }
    expect(await bob.request({ type: 'chat.start', conversationId, message: 'x' })).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect((await alice.request({ type: 'chat.list' })).result.conversations).toHaveLength(1);
    expect(await alice.request({ type: 'chat.start', model: 'openai:other', message: 'x' })).toMatchObject({
      type: 'error',
      code: 'VALIDATION',
      path: 'model',
    });
    alice.close();
    bob.close();
  });
});
