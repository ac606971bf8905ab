import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { expect, test } from 'vitest';
import { type ClientError, connect } from '../src/index.ts';

// A real WebSocket server that breaks the protocol on purpose: the client must report it, not crash.

const hello = {
  type: 'hello',
  principal: { id: 'local', role: 'operator' },
  seq: 0,
  limits: { maxFrameBytes: 1024, maxCodeBytes: 512 },
};

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
    if (request.type === 'process.list')
      send(
        JSON.stringify({ type: 'reply', id: request.id, request: 'process.list', result: { processes: [] } }),
      );
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
    if (answer)
      send(
        JSON.stringify({ type: 'reply', id: request.id, request: 'process.list', result: { processes: [] } }),
      );
  });
  await using client = await connect(server.url, { requestTimeoutMs: 200 });
  await expect(client.list()).rejects.toMatchObject({
    code: 'TIMEOUT',
    message: expect.stringContaining('process.list'),
  });
  answer = true;
  expect(await client.list()).toEqual([]);
});
