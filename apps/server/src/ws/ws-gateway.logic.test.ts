import { Socket } from 'node:net';
import { createIntentStream } from '@mci/intent-extractor';
import type { ServerMessage } from '@mci/protocol';
import { TestSocket } from '@mci/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ManualPool } from '../../test/support/manual-pool.ts';
import { createAuthenticator, type TokenGrant } from '../auth/authenticator.ts';
import { LimitsSchema } from '../config/config-schema.ts';
import { createOriginPolicy } from '../http/origin-policy.ts';
import { type Listener, listen } from '../listener.ts';
import { createProcessManager } from '../processes/process-manager.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import { createMemoryStore } from '../store/memory-store.ts';

// The WebSocket transport over real sockets, with the real process manager and a manual sandbox pool
// (the test decides when executions emit and end), so routing, replay and overflow are deterministic.

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function setup(
  options: {
    tokens?: TokenGrant[];
    maxBufferedBytes?: number;
    size?: number;
    heartbeatMs?: number;
    store?: ProcessStore;
  } = {},
) {
  const pool = new ManualPool(options.size ?? 2);
  // No output rate budget: the overflow test floods a paused reader with 25 MB of outputs.
  const manager = await createProcessManager({
    pool,
    createIntentStream,
    outputBytesPerSecond: 1 << 30,
    ...(options.store && { store: options.store }),
  });
  const limits = LimitsSchema.parse({ maxBufferedBytes: options.maxBufferedBytes ?? 1 << 22 });
  const listener: Listener = await listen({
    manager,
    authenticator: createAuthenticator(options.tokens ?? []),
    tools: [],
    limits,
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: options.heartbeatMs ?? 60_000,
    originPolicy: createOriginPolicy({ tokens: (options.tokens ?? []).length > 0, bindHost: '127.0.0.1' }),
  });
  open.push({ close: () => listener.close() });
  return { pool, manager, listener };
}

/** The shared WebSocket test client, closed after each test, with the message kinds it got. */
class Client extends TestSocket<ServerMessage> {
  constructor(url: string) {
    super(url);
    open.push({ close: () => this.socket.close() });
  }
  types(from = 0) {
    return this.messages
      .slice(from)
      .map((m) =>
        m.type === 'reply' ? `reply:${m.request}` : m.type === 'process' ? `process:${m.state}` : m.type,
      );
  }
}

/** A memory store whose next process read can be held, as a database read takes a while. */
function slowReads() {
  const memory = createMemoryStore();
  let next: { reading: PromiseWithResolvers<void>; released: PromiseWithResolvers<void> } | undefined;
  const store: ProcessStore = {
    ...memory,
    async getProcess(pid) {
      const held = next;
      next = undefined;
      if (held) {
        held.reading.resolve();
        await held.released.promise;
      }
      return memory.getProcess(pid);
    },
  };
  return {
    store,
    /** Holds the next read until `release()`; `reading` resolves once it began. */
    holdNext() {
      const held = { reading: Promise.withResolvers<void>(), released: Promise.withResolvers<void>() };
      next = held;
      return { reading: held.reading.promise, release: () => held.released.resolve() };
    },
  };
}

async function connect(url: string) {
  const client = new Client(url);
  await client.ready();
  return client;
}

describe('WebSocket gateway', () => {
  it('follows a target from the moment subscribe arrives, while the target is read from the store', async () => {
    const reads = slowReads();
    const { pool, manager, listener } = await setup({ store: reads.store });
    const operator = { id: 'local', role: 'operator' } as const;
    const { pid } = await manager.create({ code: 'x', autorun: false }, operator);
    const client = await connect(listener.wsUrl);
    const held = reads.holdNext();
    const subscribed = client.request({ type: 'subscribe', pid });
    await held.reading;
    await manager.signal(pid, 'run', operator);
    held.release();
    const reply = await subscribed;
    expect(reply).toMatchObject({ type: 'reply', request: 'subscribe' });
    // The reply's seq is the moment following began: the event sent during the read comes after it,
    // so a client that drops what is older than the reply's seq keeps it.
    const queued = client.messages.find((m) => m.type === 'process' && m.state === 'queued') as {
      seq: number;
    };
    expect((reply as { result: { seq: number } }).result.seq).toBeLessThan(queued.seq);
    (await pool.started(1)).finish();
    await client.waitFor((m) => m.type === 'process' && m.state === 'idle');
    expect(client.types(1).filter((type) => type.startsWith('process:'))).toEqual([
      'process:queued',
      'process:running',
      'process:idle',
    ]);
  });

  it('subscribes a connection to what it creates: reply first, then every event of the process', async () => {
    const { pool, listener } = await setup();
    const client = await connect(listener.wsUrl);
    const reply = await client.request({ type: 'process.create', code: 'output(1)' });
    expect(reply).toMatchObject({
      type: 'reply',
      request: 'process.create',
      result: { process: { pid: 1 } },
    });
    const execution = await pool.started(1);
    execution.emit({ type: 'output', value: 1 });
    execution.emit({ type: 'log', stream: 'stdout', text: 'hi\n' });
    execution.finish();
    await client.waitFor((m) => m.type === 'process' && m.state === 'idle');
    expect(client.types(1)).toEqual([
      'reply:process.create',
      'process:queued',
      'process:running',
      'output',
      'log',
      'process:idle',
    ]);
    // A second connection that subscribed to nothing saw nothing.
    const other = await connect(listener.wsUrl);
    await other.request({ type: 'process.get', pid: 1 });
    expect(other.types(1)).toEqual(['reply:process.get']);
  });

  it('follows a stream: intents, its processes (one after another) and stream.result', async () => {
    const { pool, listener } = await setup();
    const client = await connect(listener.wsUrl);
    await client.request({ type: 'stream.start', streamId: 's1', ref: 'm1' });
    const text =
      'Hi\n```ts exec=true\noutput(1)\n```\n```python exec=true\nx\n```\n```js exec=true\noutput(2)\n```\n';
    for (const piece of text.match(/[\s\S]{1,5}/g)!)
      await client.request({ type: 'stream.chunk', streamId: 's1', text: piece });
    await client.request({ type: 'stream.end', streamId: 's1' });
    const first = await pool.started(1);
    expect(pool.executions).toHaveLength(1); // the second block waits for the first
    first.emit({ type: 'output', value: 1 });
    first.finish();
    const second = await pool.started(2);
    second.emit({ type: 'output', value: 2 });
    second.finish();
    const result = await client.waitFor((m) => m.type === 'stream.result');
    expect(result).toMatchObject({ streamId: 's1', ref: 'm1', processes: [{ pid: 1 }, { pid: 2 }] });
    const events = client.messages.filter((m) => m.type === 'intent' || m.type === 'output');
    expect(
      events.map((m) =>
        m.type === 'intent' ? `intent ${m.index} ${m.rejected ? 'rejected' : m.pid}` : `output ${m.pid}`,
      ),
    ).toEqual(['intent 0 1', 'intent 1 rejected', 'intent 2 2', 'output 1', 'output 2']);
  });

  it('replays exactly the events after since, then goes on live', async () => {
    const { pool, listener } = await setup();
    const a = await connect(listener.wsUrl);
    await a.request({ type: 'process.create', code: 'x', ref: 'r' });
    const execution = await pool.started(1);
    for (let i = 0; i < 5; i++) execution.emit({ type: 'output', value: i });
    await a.waitFor((m) => m.type === 'output' && m.value === 4);
    const seen = a.messages.filter((m) => 'seq' in m && m.type !== 'hello');
    const cut = (seen[3] as { seq: number }).seq;

    const b = await connect(listener.wsUrl);
    const reply = await b.request({ type: 'subscribe', ref: 'r', since: cut });
    expect(reply).toMatchObject({ result: { replayed: seen.length - 4 } });
    execution.emit({ type: 'output', value: 5 });
    execution.finish();
    await b.waitFor((m) => m.type === 'process' && m.state === 'idle');
    await a.waitFor((m) => m.type === 'process' && m.state === 'idle');
    const seqs = (c: Client) =>
      c.messages.filter((m) => 'seq' in m && m.type !== 'hello').map((m) => (m as { seq: number }).seq);
    expect(seqs(b)).toEqual(seqs(a).filter((s) => s > cut));
    // A replay is exactly the stored events after since, even those another subscription delivered.
    const again = await b.request({ type: 'subscribe', pid: 1, since: 0 });
    expect(again).toMatchObject({ result: { replayed: seqs(a).length } });
  });

  it('drops live events for a reader that does not read, and says where to resume', async () => {
    const { pool, manager, listener } = await setup({ maxBufferedBytes: 1024 });
    const slow = await connect(listener.wsUrl);
    await slow.request({ type: 'subscribe', all: true });
    const raw = (slow.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    raw.pause();
    const operator = { id: 'local', role: 'operator' } as const;
    await manager.create({ code: 'x' }, operator);
    const execution = await pool.started(1);
    const big = 'y'.repeat(64 * 1024);
    for (let i = 0; i < 400; i++) execution.emit({ type: 'output', value: big });
    execution.finish();
    await manager.wait(1, operator);
    raw.resume();
    const overflow = await slow.waitFor((m) => m.type === 'overflow');
    expect(overflow).toMatchObject({ subscriptions: [{ all: true }] });
    const delivered = slow.messages.filter((m) => 'seq' in m && m.type !== 'hello');
    expect(delivered.length).toBeLessThan(402);
    expect(overflow.type === 'overflow' && overflow.since).toBe((delivered.at(-1) as { seq: number }).seq);
    const from = slow.messages.length;
    await slow.request({
      type: 'subscribe',
      all: true,
      since: overflow.type === 'overflow' ? overflow.since : 0,
    });
    const resumed = slow.messages.slice(from).filter((m) => 'seq' in m);
    expect([...delivered, ...resumed].map((m) => (m as { seq: number }).seq)).toEqual(
      (await manager.replay(0, { all: true }, operator)).map((event) => event.seq),
    );
  });

  it('writes the events of one tick to a connection in one socket write, not one per event', async () => {
    const { pool, manager, listener } = await setup();
    const client = await connect(listener.wsUrl);
    await client.request({ type: 'subscribe', all: true });
    const operator = { id: 'local', role: 'operator' } as const;
    await manager.create({ code: 'x' }, operator);
    const execution = await pool.started(1);
    await client.waitFor((m) => m.type === 'process' && m.state === 'running');
    // Counts the writes that reach the server side of the connection's socket (Node calls `_writev`
    // or `_write` once per write to the operating system).
    let writes = 0;
    const proto = Socket.prototype as unknown as Record<
      '_writev' | '_write',
      (...args: unknown[]) => unknown
    >;
    const original = { _writev: proto._writev, _write: proto._write };
    for (const name of ['_writev', '_write'] as const) {
      proto[name] = function (this: Socket, ...args: unknown[]) {
        if (this.localPort === listener.port) writes++;
        return original[name].apply(this, args);
      };
    }
    try {
      for (let i = 0; i < 500; i++) execution.emit({ type: 'output', value: i });
      await client.waitFor((m) => m.type === 'output' && m.value === 499);
    } finally {
      Object.assign(proto, original);
    }
    expect(client.messages.filter((m) => m.type === 'output')).toHaveLength(500);
    expect(writes).toBeLessThanOrEqual(2);
    execution.finish();
  });

  it('terminates a connection that stops answering pings; a live one stays', async () => {
    const { listener } = await setup({ heartbeatMs: 100 });
    const live = await connect(listener.wsUrl);
    const dead = new WebSocket(listener.wsUrl, { autoPong: false });
    const closed = new Promise<number>((resolve) => dead.on('close', (code) => resolve(code)));
    let pings = 0;
    dead.on('ping', () => pings++);
    expect(await closed).toBe(1006); // terminated, no close handshake
    expect(pings).toBeGreaterThanOrEqual(1);
    expect(live.socket.readyState).toBe(WebSocket.OPEN);
    expect(await live.request({ type: 'process.list' })).toMatchObject({ type: 'reply' });
  });
});
