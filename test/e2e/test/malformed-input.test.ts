import type { MciServer } from '@mci/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// Every kind of bad input over the WebSocket gets an error reply, the connection stays open (except for
// an oversized frame: 1009), and the server keeps serving other connections.

let server: MciServer;
beforeAll(async () => {
  server = await startServer({ limits: { maxFrameBytes: 256 * 1024, maxCodeBytes: 100 * 1024 } });
});
afterAll(() => server?.close({ graceMs: 0 }));

describe('malformed input over WebSocket', { timeout: 60_000 }, () => {
  it('answers each malformed frame with an error and stays open', async () => {
    await using client = await TestClient.open(server.wsUrl);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['{"type": "process.create", "code": ', { code: 'BAD_JSON' }],
      ['hello there', { code: 'BAD_JSON' }],
      ['[]', { code: 'VALIDATION' }],
      ['42', { code: 'VALIDATION' }],
      ['{"id": 1}', { code: 'VALIDATION', id: 1, path: 'type' }],
      ['{"id": 2, "type": "process.destroy"}', { code: 'UNKNOWN_TYPE', id: 2 }],
      ['{"id": 3, "type": "process.create"}', { code: 'VALIDATION', id: 3, path: 'code' }],
      ['{"id": 4, "type": "process.create", "code": 5}', { code: 'VALIDATION', id: 4, path: 'code' }],
      [
        '{"id": 5, "type": "process.signal", "pid": 1, "signal": "stop"}',
        { code: 'VALIDATION', id: 5, path: 'signal' },
      ],
      ['{"id": 6, "type": "process.get", "pid": "1"}', { code: 'VALIDATION', id: 6, path: 'pid' }],
      [
        '{"id": 7, "type": "process.create", "code": "1", "timeoutMs": -1}',
        { code: 'VALIDATION', id: 7, path: 'timeoutMs' },
      ],
      ['{"id": 8, "type": "subscribe"}', { code: 'VALIDATION', id: 8 }],
      ['{"id": 9, "type": "stream.chunk", "streamId": "none", "text": "x"}', { code: 'NOT_FOUND', id: 9 }],
      [
        '{"id": 10, "type": "process.create", "code": "1", "extra": true}',
        { code: 'VALIDATION', id: 10, path: 'extra' },
      ],
    ];
    for (const [frame, expected] of cases) {
      const from = client.messages.length;
      client.sendRaw(frame);
      const error = await client.waitFor((m) => m.type === 'error', from);
      expect(error, frame).toMatchObject({ type: 'error', ...expected });
    }
    const from = client.messages.length;
    client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await client.waitFor((m) => m.type === 'error', from)).toMatchObject({ code: 'VALIDATION' });

    const tooMuchCode = await client.request({ type: 'process.create', code: `//${'x'.repeat(101 * 1024)}` });
    expect(tooMuchCode, JSON.stringify(tooMuchCode)).toMatchObject({ type: 'error', code: 'CODE_TOO_LARGE' });
    // Still open and serving.
    const ok = await client.ok({ type: 'process.create', code: 'output("still here")' });
    expect((await client.waitIdle(ok.result.process.pid)).status).toBe('success');
    expect(client.protocolErrors).toEqual([]);
  });

  it('closes a connection that sends an oversized frame with 1009; others keep working', async () => {
    await using bystander = await TestClient.open(server.wsUrl);
    const offender = await TestClient.open(server.wsUrl);
    offender.sendRaw(JSON.stringify({ type: 'process.create', code: 'x'.repeat(300 * 1024) }));
    expect(await offender.closed).toBe(1009);
    const ok = await bystander.ok({ type: 'process.create', code: 'output(7)' });
    expect((await bystander.waitIdle(ok.result.process.pid)).status).toBe('success');
  });

  it('refuses upgrades on other paths', async () => {
    await expect(TestClient.open(server.wsUrl.replace('/ws', '/other'))).rejects.toThrow(/404/);
  });
});
