import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import { type ClientError, connect } from '../src/index.ts';

// A real WebSocket server that breaks the protocol on purpose: the client must report it, not crash.

const hello = {
  type: 'hello',
  principal: { id: 'local', role: 'operator' },
  seq: 0,
  limits: { maxFrameBytes: 1024, maxCodeBytes: 512 },
};

/** A well-formed reply to `process.list` request `id`: no processes. */
const emptyList = (id: number | undefined) =>
  JSON.stringify({ type: 'reply', id, request: 'process.list', result: { items: [], processes: [] } });

async function misbehavingServer(
  onRequest: (request: { type: string; id?: number }, send: (data: string) => void) => void,
  sayHello = true,
) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (socket) => {
    if (sayHello) socket.send(JSON.stringify(hello));
    socket.on('message', (data) => onRequest(JSON.parse(String(data)), (text) => socket.send(text)));
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    async [Symbol.asyncDispose]() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

test('a reply that breaks the schema fails its request with PROTOCOL; junk frames are reported, the client goes on', async () => {
  await using server = await misbehavingServer((request, send) => {
    send('this is not JSON');
    send(JSON.stringify({ type: 'surprise' }));
    if (request.type === 'process.get')
      send(
        JSON.stringify({
          type: 'reply',
          id: request.id,
          request: 'process.get',
          result: { process: { pid: 'seven' } },
        }),
      );
    if (request.type === 'process.list') send(emptyList(request.id));
  });
  await using client = await connect(server.url, { reconnect: false });
  const errors: ClientError[] = [];
  client.onError((error) => errors.push(error));
  await expect(client.get(7)).rejects.toMatchObject({ code: 'PROTOCOL' });
  expect(await client.list()).toEqual([]);
  expect(errors.map((error) => error.code)).toEqual(['PROTOCOL', 'PROTOCOL', 'PROTOCOL', 'PROTOCOL']);
  expect(errors[0]?.message).toContain('not JSON');
});

test('a server that never says hello: connect fails after connectTimeoutMs', async () => {
  await using server = await misbehavingServer(() => {}, false);
  await expect(connect(server.url, { connectTimeoutMs: 300 })).rejects.toMatchObject({
    code: 'CONNECT_FAILED',
    message: expect.stringContaining('no hello'),
  });
});

test('a server that never answers: the request fails with TIMEOUT, the connection stays usable', async () => {
  let answer = false;
  await using server = await misbehavingServer((request, send) => {
    if (answer) send(emptyList(request.id));
  });
  await using client = await connect(server.url, { requestTimeoutMs: 200 });
  await expect(client.list()).rejects.toMatchObject({
    code: 'TIMEOUT',
    message: expect.stringContaining('process.list'),
  });
  answer = true;
  expect(await client.list()).toEqual([]);
});

test('an overflow notice: the client subscribes again from the last seq it delivered and misses nothing', async () => {
  const subscribes: Array<{ since?: number }> = [];
  const output = (seq: number) => JSON.stringify({ type: 'output', seq, pid: 1, run: 1, value: seq });
  await using server = await misbehavingServer((request, send) => {
    if (request.type !== 'subscribe') return;
    const { since } = request as { since?: number };
    subscribes.push({ since });
    if (subscribes.length === 1) {
      send(
        JSON.stringify({
          type: 'reply',
          id: request.id,
          request: 'subscribe',
          result: { subscription: { pid: 1 }, replayed: 0, seq: 0 },
        }),
      );
      for (const seq of [1, 2, 3]) send(output(seq));
      // Too slow: the server drops the subscription after seq 3 and says so.
      send(JSON.stringify({ type: 'overflow', since: 3, subscriptions: [{ pid: 1 }] }));
      return;
    }
    for (const seq of [3, 4, 5]) send(output(seq)); // a replay that overlaps what was delivered
    send(
      JSON.stringify({
        type: 'reply',
        id: request.id,
        request: 'subscribe',
        result: { subscription: { pid: 1 }, replayed: 3, seq: 5 },
      }),
    );
    send(output(6));
  });
  await using client = await connect(server.url);
  const seen: number[] = [];
  for await (const event of client.subscribe(1, { since: 0 })) {
    seen.push(event.seq);
    if (event.seq === 6) break;
  }
  expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
  expect(subscribes).toEqual([{ since: 0 }, { since: 3 }]);
});
