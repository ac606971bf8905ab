import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ConnectionState, connect, type MciClient, type ServerEvent } from '../src/index.ts';
import { type ServerProcess, startServerProcess } from '@mci/test-support';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

// Dropped connections against a real `mci serve`: a TCP proxy in between cuts the live connection
// (the server sees its socket close) and refuses new ones for a while.

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess();
});

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

const fast = { initialDelayMs: 20, maxDelayMs: 200 };

/** Resolves the next time the client reaches `state`. */
function nextState(client: MciClient, state: ConnectionState): Promise<void> {
  return new Promise((resolve) => {
    const stop = client.onStateChange((current) => {
      if (current !== state) return;
      stop();
      resolve();
    });
  });
}

/** A process that outputs 0..count-1, one every `everyMs`. */
const slowCounter = (count: number, everyMs: number) =>
  `for (let i = 0; i < ${count}; i++) { output(i); await new Promise((resolve) => setTimeout(resolve, ${everyMs})); }`;

const seqs = (events: ServerEvent[]) => events.map((event) => event.seq);

function expectStrictlyIncreasing(events: ServerEvent[]): void {
  const list = seqs(events);
  for (let i = 1; i < list.length; i++) expect(list[i]).toBeGreaterThan(list[i - 1] as number);
}

/** Every stored event of a stream, read by a fresh client from the start of history. */
async function referenceStreamEvents(streamId: string): Promise<ServerEvent[]> {
  await using fresh = await connect(server.url);
  const events: ServerEvent[] = [];
  for await (const event of fresh.subscribe({ streamId }, { since: 0 })) {
    events.push(event);
    if (event.type === 'stream.result') break;
  }
  return events;
}

describe('a dropped connection', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy(server.port);
  });
  afterAll(async () => {
    await proxy?.[Symbol.asyncDispose]();
  });

  test('mid-stream: no event lost, none repeated; chunks written while disconnected go out after the reconnect', async () => {
    await using client = await connect(`ws://${proxy.hostPort}/ws`, { reconnect: fast });
    const states: ConnectionState[] = [];
    client.onStateChange((state) => states.push(state));
    const accepted = proxy.accepted;

    const events: ServerEvent[] = [];
    let dropped = false;
    const reconnecting = nextState(client, 'reconnecting');
    const stream = client.openStream({
      ref: 'drop-mid-stream',
      onEvent: (event) => {
        events.push(event);
        // Cut the connection while the first block is producing outputs, and keep it down.
        if (!dropped && event.type === 'output' && event.value === 10) {
          dropped = true;
          proxy.refuse(true);
          proxy.dropAll();
        }
      },
    });
    await stream.write('First, count slowly:\n\n```ts exec=true\n');
    await stream.write(`${slowCounter(40, 10)}\n\`\`\`\n\n`);
    await reconnecting;
    // Written while disconnected: queued, sent in order once the connection is back.
    const writes = [
      stream.write('Then a second block:\n\n```ts exec=tr'),
      stream.write('ue\noutput("second");\n```\n'),
      stream.end(),
    ];
    const opened = nextState(client, 'open');
    proxy.refuse(false);
    await opened;
    await Promise.all(writes);
    const result = await stream.result;

    expect(states).toEqual(expect.arrayContaining(['reconnecting', 'open']));
    expect(proxy.accepted).toBeGreaterThan(accepted);
    expect(result.processes.map((process) => process.status)).toEqual(['success', 'success']);
    expectStrictlyIncreasing(events);
    const outputs = events.filter((event) => event.type === 'output').map((event) => event.value);
    expect(outputs).toEqual([...Array.from({ length: 40 }, (_, i) => i), 'second']);
    // Exactly what the server stored for the stream: nothing lost, nothing repeated.
    expect(events).toEqual(await referenceStreamEvents(stream.streamId));
  });

  test('during events(pid): the iteration goes on from where it was, and wait() still resolves', async () => {
    await using client = await connect(`ws://${proxy.hostPort}/ws`, { reconnect: fast });
    const { pid } = await client.createProcess(slowCounter(30, 10));
    const waited = client.wait(pid);
    const events: ServerEvent[] = [];
    for await (const event of client.events(pid)) {
      events.push(event);
      if (event.type === 'output' && (event.value === 5 || event.value === 20)) proxy.dropAll();
    }
    expect(events.at(-1)).toMatchObject({ type: 'process', state: 'idle', status: 'success' });
    expectStrictlyIncreasing(events);
    expect(events.filter((event) => event.type === 'output').map((event) => event.value)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );
    expect(await waited).toMatchObject({ pid, status: 'success' });
    await using fresh = await connect(server.url);
    const reference: ServerEvent[] = [];
    for await (const event of fresh.events(pid)) reference.push(event);
    expect(events).toEqual(reference);
  });

  test('requests made while disconnected wait for the connection, up to maxBacklog and requestTimeoutMs', async () => {
    await using client = await connect(`ws://${proxy.hostPort}/ws`, {
      reconnect: fast,
      maxBacklog: 2,
      requestTimeoutMs: 60_000,
    });
    const { pid } = await client.createProcess('output("kept")');
    await client.wait(pid);
    const reconnecting = nextState(client, 'reconnecting');
    proxy.refuse(true);
    proxy.dropAll();
    await reconnecting;
    const first = client.get(pid);
    const second = client.list({ ref: 'nothing-has-this-ref' });
    await expect(client.get(pid)).rejects.toMatchObject({ code: 'BACKLOG_FULL' });
    proxy.refuse(false);
    expect(await first).toMatchObject({ pid, status: 'success' });
    expect(await second).toEqual([]);

    await using impatient = await connect(`ws://${proxy.hostPort}/ws`, {
      reconnect: fast,
      requestTimeoutMs: 300,
    });
    const down = nextState(impatient, 'reconnecting');
    proxy.refuse(true);
    proxy.dropAll();
    await down;
    await expect(impatient.get(pid)).rejects.toMatchObject({ code: 'TIMEOUT' });
    proxy.refuse(false);
  });

  test('without reconnect, a drop fails what is waiting and closes the client with DISCONNECTED', async () => {
    const client = await connect(`ws://${proxy.hostPort}/ws`, { reconnect: false });
    const subscription = client.subscribe({ all: true });
    await subscription.ready;
    const closed = nextState(client, 'closed');
    proxy.dropAll();
    await closed;
    await expect(client.get(1)).rejects.toMatchObject({ code: 'DISCONNECTED' });
    await expect(subscription[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'DISCONNECTED' });
  });

  test('giving up after maxAttempts fails waiting requests and iterations with DISCONNECTED', async () => {
    const client = await connect(`ws://${proxy.hostPort}/ws`, { reconnect: { ...fast, maxAttempts: 2 } });
    const { pid } = await client.createProcess('output(1)');
    await client.wait(pid);
    const subscription = client.subscribe(pid);
    await subscription.ready;
    proxy.refuse(true);
    proxy.dropAll();
    const pending = client.get(pid);
    await expect(pending).rejects.toMatchObject({ code: 'DISCONNECTED' });
    expect(client.state).toBe('closed');
    await expect(subscription[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'DISCONNECTED' });
    proxy.refuse(false);
  });
});

describe('tokens', () => {
  let secured: ServerProcess;
  beforeAll(async () => {
    secured = await startServerProcess({
      env: { MCI_API_KEY: 'op-secret', MCI_CLIENT_TOKENS: 'alice=alice-secret' },
    });
  });
  afterAll(async () => {
    await secured?.[Symbol.asyncDispose]();
  });

  test('no token or a wrong one is UNAUTHORIZED; a client token is a client, the operator key an operator', async () => {
    await expect(connect(secured.url)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(connect(secured.url, { token: 'nope' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await using alice = await connect(secured.url, { token: 'alice-secret' });
    expect(alice.principal).toEqual({ id: 'alice', role: 'client' });
    await using operator = await connect(secured.url, { token: 'op-secret' });
    expect(operator.principal.role).toBe('operator');
    // The HTTP reads carry the token too.
    const { pid } = await alice.createProcess('console.log("mine")');
    await alice.wait(pid);
    expect((await alice.getRun(pid)).stdout).toBe('mine\n');
    expect(await operator.getCode(pid)).toBe('console.log("mine")');
  });

  test('the browser path: the global WebSocket with ?token=', async () => {
    const { globalSocketFactory } = await import('../src/index.ts');
    await using browserLike = await connect(secured.url, {
      token: 'alice-secret',
      socketFactory: globalSocketFactory,
    });
    expect(browserLike.principal).toEqual({ id: 'alice', role: 'client' });
    const { pid } = await browserLike.createProcess('output("from a browser-like client")');
    expect(await browserLike.wait(pid)).toMatchObject({ status: 'success' });
  });
});
