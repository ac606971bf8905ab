import { createIntentStream } from '@mci/intent-extractor';
import type { ServerMessage } from '@mci/protocol';
import { TestSocket } from '@mci/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthenticator, type TokenGrant } from '../src/auth/authenticator.ts';
import { LimitsSchema } from '../src/config/config-schema.ts';
import { type Listener, listen } from '../src/listener.ts';
import { MAX_METADATA_DEPTH } from '../src/processes/limits.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import type { ProcessStore } from '../src/processes/process-store.ts';
import { EVENTS_PER_TURN } from '../src/processes/run-output.ts';
import { MAX_OUTPUT_EVENTS_PER_RUN } from '../src/processes/run-output-limits.ts';
import { DEFAULT_MAX_OPEN_STREAMS } from '../src/processes/stream-registry.ts';
import { createMemoryStore } from '../src/store/memory-store.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { REPLAY_WINDOW, REPLAY_WINDOW_BYTES } from '../src/ws/replay.ts';
import { ManualPool } from './support/manual-pool.ts';

// What a hostile client sends or asks for stays bounded: replays read the store in windows, streams
// cap an open exec block and the streams one client holds, stream ids are per client, metadata has
// a depth and size limit, and pids are decimal. Real sockets, the real manager, a manual pool.

const TOKENS: TokenGrant[] = [
  { token: 'alice-token', role: 'client', id: 'alice' },
  { token: 'bob-token', role: 'client', id: 'bob' },
];

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function setup(options: { store?: ProcessStore; maxCodeBytes?: number; streamIdleMs?: number } = {}) {
  const pool = new ManualPool(2);
  const manager = await createProcessManager({
    pool,
    createIntentStream,
    ...(options.store && { store: options.store }),
    ...(options.maxCodeBytes && { maxCodeBytes: options.maxCodeBytes }),
    ...(options.streamIdleMs && { streamIdleMs: options.streamIdleMs }),
  });
  const listener: Listener = await listen({
    manager,
    authenticator: createAuthenticator(TOKENS),
    tools: [],
    limits: LimitsSchema.parse({ maxCodeBytes: options.maxCodeBytes ?? 100 * 1024 }),
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: 60_000,
  });
  open.push({ close: () => listener.close() });
  return { pool, manager, listener };
}

/** The shared WebSocket test client with a bearer token, closed after each test; `send` waits for the hello first. */
class Client extends TestSocket<ServerMessage> {
  constructor(url: string, token: string) {
    super(url, { token });
    open.push({ close: () => this.socket.close() });
  }
  async send(message: object): Promise<ServerMessage> {
    await this.ready();
    return this.request(message);
  }
}

function http(listener: Listener, path: string, init: RequestInit = {}, token = 'alice-token') {
  return fetch(`${listener.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...init.headers },
  });
}

describe('replay of a large log', () => {
  it('reads the store in bounded windows instead of loading every row at once', async () => {
    const store = createMemoryStore();
    let largestRead = 0;
    let reads = 0;
    const counted: ProcessStore = {
      ...store,
      async eventsSince(since, filter) {
        const events = await store.eventsSince(since, filter);
        reads++;
        largestRead = Math.max(largestRead, events.length);
        return events;
      },
    };
    const { pool, listener } = await setup({ store: counted });
    const alice = new Client(listener.wsUrl, 'alice-token');
    const created = await alice.send({ type: 'process.create', code: 'flood()' });
    expect(created.type).toBe('reply');
    const execution = await pool.started(1);
    const outputs = 3 * REPLAY_WINDOW + 17;
    for (let i = 0; i < outputs; i++) execution.emit({ type: 'output', value: i });
    execution.finish();
    await alice.waitFor((m) => m.type === 'process' && m.state === 'idle');

    const reader = new Client(listener.wsUrl, 'alice-token');
    reads = 0;
    const reply = await reader.send({ type: 'subscribe', all: true, since: 0 });
    expect(reply).toMatchObject({ type: 'reply', result: { replayed: outputs + 3 } });
    expect(reads).toBeGreaterThan(3);
    expect(largestRead).toBeLessThanOrEqual(REPLAY_WINDOW);
    const values = reader.messages.flatMap((m) => (m.type === 'output' ? [m.value] : []));
    expect(values).toEqual(Array.from({ length: outputs }, (_, i) => i));
  });

  it('reads a window of large events only up to its byte budget', async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    const readBytes: number[] = [];
    const eventsSince: ProcessStore['eventsSince'] = async (since, filter) => {
      const events = await store.eventsSince(since, filter);
      readBytes.push(
        events.reduce(
          (sum, { event }) => sum + (event.type === 'output' ? String(event.value).length : 0),
          0,
        ),
      );
      return events;
    };
    // The store with its reads counted (its methods keep their own `this`).
    const counted = new Proxy(store, {
      get(target, key) {
        if (key === 'eventsSince') return eventsSince;
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { pool, listener } = await setup({ store: counted });
    const alice = new Client(listener.wsUrl, 'alice-token');
    const big = (i: number) => `${i}:`.padEnd(250_000, 'x');
    for (let p = 0; p < 8; p++) {
      await alice.send({ type: 'process.create', code: 'big()' });
      const execution = await pool.started(p + 1);
      execution.emit({ type: 'output', value: big(2 * p) });
      execution.emit({ type: 'output', value: big(2 * p + 1) });
      execution.finish();
      await alice.waitFor((m) => m.type === 'process' && m.pid === p + 1 && m.state === 'idle');
    }

    const reader = new Client(listener.wsUrl, 'alice-token');
    readBytes.length = 0;
    await reader.send({ type: 'subscribe', all: true, since: 0 });
    expect(Math.max(...readBytes)).toBeLessThanOrEqual(REPLAY_WINDOW_BYTES + 250_000);
    expect(readBytes.length).toBeGreaterThan(3);
    const values = reader.messages.flatMap((m) => (m.type === 'output' ? [m.value] : []));
    expect(values).toEqual(Array.from({ length: 16 }, (_, i) => big(i)));
  });
});

describe('output floods', () => {
  it('joins a console flood into one log event per slice of a turn and caps the output events of a run', async () => {
    const { pool, listener, manager } = await setup();
    const alice = new Client(listener.wsUrl, 'alice-token');
    await alice.send({ type: 'process.create', code: 'flood()' });
    const execution = await pool.started(1);
    for (let i = 0; i < 1000; i++) execution.emit({ type: 'log', stream: 'stdout', text: `line ${i}\n` });
    for (let i = 0; i < MAX_OUTPUT_EVENTS_PER_RUN + 100; i++) execution.emit({ type: 'output', value: i });
    execution.finish();
    await alice.waitFor((m) => m.type === 'process' && m.state === 'idle');
    const logs = alice.messages.filter((m) => m.type === 'log' && m.stream === 'stdout');
    expect(logs).toHaveLength(Math.ceil(1000 / EVENTS_PER_TURN));
    expect(logs.map((m) => (m.type === 'log' ? m.text : '')).join('')).toBe(
      Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join(''),
    );
    expect(alice.messages.filter((m) => m.type === 'output')).toHaveLength(MAX_OUTPUT_EVENTS_PER_RUN);
    const result = await manager.getResult(1, { id: 'alice', role: 'client' });
    expect(result.outputs).toHaveLength(MAX_OUTPUT_EVENTS_PER_RUN);
    expect(result).toMatchObject({
      truncated: true,
      stdout: expect.stringContaining('line 999'),
      stderr: expect.stringContaining(
        `[mci] this run is truncated: 100 outputs and 0 bytes of logs were dropped, over the server's limit of ${MAX_OUTPUT_EVENTS_PER_RUN} output events per run`,
      ),
    });
  });
});

describe('streams of a hostile client', () => {
  it('scopes stream ids to the client: the same id is free for another client and reveals nothing', async () => {
    const { listener } = await setup();
    const alice = new Client(listener.wsUrl, 'alice-token');
    const bob = new Client(listener.wsUrl, 'bob-token');
    expect(await alice.send({ type: 'stream.start', streamId: 'turn-1' })).toMatchObject({ type: 'reply' });
    expect(await bob.send({ type: 'stream.start', streamId: 'turn-1' })).toMatchObject({ type: 'reply' });
    expect(await alice.send({ type: 'stream.start', streamId: 'turn-1' })).toMatchObject({
      type: 'error',
      code: 'CONFLICT',
    });
    await bob.send({ type: 'stream.chunk', streamId: 'turn-1', text: 'bob only\n' });
    expect(await bob.send({ type: 'stream.end', streamId: 'turn-1' })).toMatchObject({ type: 'reply' });
    expect(
      await alice.send({ type: 'stream.chunk', streamId: 'turn-1', text: 'still open\n' }),
    ).toMatchObject({ type: 'reply' });
  });

  it('caps the unfinished streams of one client (LIMIT_EXCEEDED) without touching another', async () => {
    const { listener } = await setup();
    const alice = new Client(listener.wsUrl, 'alice-token');
    const bob = new Client(listener.wsUrl, 'bob-token');
    for (let i = 0; i < DEFAULT_MAX_OPEN_STREAMS; i++)
      expect(await alice.send({ type: 'stream.start', streamId: `s${i}` })).toMatchObject({ type: 'reply' });
    expect(await alice.send({ type: 'stream.start', streamId: 'one-more' })).toMatchObject({
      type: 'error',
      code: 'LIMIT_EXCEEDED',
    });
    expect(await bob.send({ type: 'stream.start', streamId: 's0' })).toMatchObject({ type: 'reply' });
    await alice.send({ type: 'stream.end', streamId: 's0' });
    expect(await alice.send({ type: 'stream.start', streamId: 'one-more' })).toMatchObject({ type: 'reply' });
  });

  it('ends streams idle past streamIdleMs to make room, so a vanished client does not hold its quota', async () => {
    const { listener } = await setup({ streamIdleMs: 50 });
    const alice = new Client(listener.wsUrl, 'alice-token');
    for (let i = 0; i < DEFAULT_MAX_OPEN_STREAMS; i++)
      await alice.send({ type: 'stream.start', streamId: `s${i}` });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await alice.send({ type: 'stream.chunk', streamId: 's5', text: 'still writing\n' });
    expect(await alice.send({ type: 'stream.start', streamId: 'fresh' })).toMatchObject({ type: 'reply' });
    await alice.waitFor((m) => m.type === 'stream.result' && m.streamId === 's0');
    expect(await alice.send({ type: 'stream.chunk', streamId: 's5', text: 'more\n' })).toMatchObject({
      type: 'reply',
    });
    expect(await alice.send({ type: 'stream.chunk', streamId: 's0', text: 'late\n' })).toMatchObject({
      type: 'error',
      code: 'CONFLICT',
    });
  });

  it('rejects an unclosed exec block past the code limit and stops buffering it; later blocks still run', async () => {
    const { pool, listener } = await setup({ maxCodeBytes: 4096 });
    const alice = new Client(listener.wsUrl, 'alice-token');
    await alice.send({ type: 'stream.start', streamId: 'big' });
    await alice.send({ type: 'stream.chunk', streamId: 'big', text: '```ts exec=true\n' });
    const line = `${'x'.repeat(1000)}\n`;
    const answers: ServerMessage[] = [];
    for (let i = 0; i < 6; i++)
      answers.push(await alice.send({ type: 'stream.chunk', streamId: 'big', text: line }));
    const refused = answers.filter((m) => m.type === 'error');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ code: 'CODE_TOO_LARGE', path: 'text' });
    const rejected = await alice.waitFor((m) => m.type === 'intent' && m.rejected !== undefined);
    expect(rejected).toMatchObject({ index: 0, rejected: expect.stringContaining('4096 bytes') });
    // The rest of the oversize block is skipped, its closing fence ends it, and the next block runs.
    await alice.send({ type: 'stream.chunk', streamId: 'big', text: `${line}\`\`\`\n` });
    await alice.send({ type: 'stream.chunk', streamId: 'big', text: '```ts exec=true\noutput(1)\n```\n' });
    const execution = await pool.started(1);
    expect(execution.request.code).toBe('output(1)');
    execution.finish();
    await alice.send({ type: 'stream.end', streamId: 'big' });
    const result = await alice.waitFor((m) => m.type === 'stream.result');
    expect(result).toMatchObject({ text: expect.stringContaining('block 0 (ts): not run: code is over') });
  });

  it('holds at most the code limit of one unfinished line', async () => {
    const { listener, manager } = await setup({ maxCodeBytes: 1024 });
    const alice = new Client(listener.wsUrl, 'alice-token');
    await alice.send({ type: 'stream.start', streamId: 'long-line' });
    for (let i = 0; i < 20; i++)
      await alice.send({ type: 'stream.chunk', streamId: 'long-line', text: 'prose '.repeat(500) });
    // The cut line still ends, and a block after it is found.
    await alice.send({
      type: 'stream.chunk',
      streamId: 'long-line',
      text: '\n```ts exec=true\noutput(2)\n```\n',
    });
    await alice.waitFor((m) => m.type === 'intent' && m.pid !== undefined);
    expect((await manager.list({}, { id: 'alice', role: 'client' })).items).toHaveLength(1);
  });
});

describe('metadata and pids over HTTP', () => {
  it('refuses metadata nested past the depth limit with a 400 naming it (not a 500 later)', async () => {
    const { listener } = await setup();
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const response = await http(listener, '/processes', {
      method: 'POST',
      body: `{"code":"output(1)","autorun":false,"metadata":${deep}}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: 'VALIDATION',
      path: 'metadata',
      error: expect.stringContaining(`${MAX_METADATA_DEPTH} levels`),
    });
    const list = await http(listener, '/processes');
    expect(list.status).toBe(200);
    expect(((await list.json()) as { processes: unknown[] }).processes).toEqual([]);
  });

  it('refuses metadata over the size limit with a 400 naming it', async () => {
    const { listener } = await setup();
    const response = await http(listener, '/processes', {
      method: 'POST',
      body: JSON.stringify({ code: 'output(1)', autorun: false, metadata: { note: 'x'.repeat(20_000) } }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      path: 'metadata',
      error: expect.stringContaining('bytes'),
    });
  });

  it('parses pids as decimal digits only', async () => {
    const { listener } = await setup();
    for (let i = 0; i < 16; i++)
      await http(listener, '/processes', { method: 'POST', body: '{"code":"1","autorun":false}' });
    expect((await http(listener, '/processes/16')).status).toBe(200);
    for (const bad of ['0x10', '1e1', '%2016', '16.0', '+16', '0b10000', '-16', '0'])
      expect([bad, (await http(listener, `/processes/${bad}`)).status]).toEqual([bad, 400]);
    expect((await http(listener, '/processes/16/runs/0x1')).status).toBe(400);
  });
});
