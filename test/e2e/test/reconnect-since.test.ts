import type { ServerEvent } from '@mci/protocol';
import type { MciServer } from '@mci/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// A client that drops its connection and subscribes again with `since` gets exactly what it missed.

let server: MciServer;
beforeAll(async () => {
  server = await startServer({ check: 'off', limits: { maxBufferedBytes: 16 * 1024 } });
});
afterAll(() => server?.close({ graceMs: 0 }));

const ticker = (n: number, pad = 0) =>
  `for (let i = 0; i < ${n}; i++) { output(${pad ? `String(i).padEnd(${pad}, '.')` : 'i'}); console.log('tick', i); await new Promise((r) => setTimeout(r, 2)); }`;

/** All stored events visible for `target`, read on a fresh connection with since 0. */
async function reference(target: { pid: number } | { ref: string }): Promise<ServerEvent[]> {
  await using reader = await TestClient.open(server.wsUrl);
  await reader.ok({ type: 'subscribe', ...target, since: 0 });
  return reader.events();
}

describe('reconnect with since', { timeout: 60_000 }, () => {
  it('loses no event and repeats none across a dropped connection', async () => {
    const first = await TestClient.open(server.wsUrl);
    const created = await first.ok({ type: 'process.create', code: ticker(60), ref: 'reconnect' });
    const pid = created.result.process.pid;
    await first.waitFor((m) => m.type === 'output' && m.value === 10);
    first.socket.terminate(); // an abrupt drop, no close handshake
    await first.closed;
    const seen = first.events();
    const since = seen.at(-1)!.seq;

    await using second = await TestClient.open(server.wsUrl);
    const reply = await second.ok({ type: 'subscribe', pid, since });
    const beforeReply = second.messages
      .slice(0, second.messages.indexOf(reply))
      .filter((m) => 'seq' in m && m.type !== 'hello');
    expect(reply.result.replayed).toBe(beforeReply.length);
    await second.waitIdle(pid);
    const all = [...seen, ...second.events()];
    const expected = await reference({ pid });
    expect(all.map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
    expect(all).toEqual(expected);
    expect(all.filter((e) => e.type === 'output').map((e) => e.type === 'output' && e.value)).toEqual([
      ...Array(60).keys(),
    ]);
  });

  it('a slow reader is told to resubscribe (overflow) instead of being buffered without bound', async () => {
    await using slow = await TestClient.open(server.wsUrl);
    await slow.ok({ type: 'subscribe', ref: 'flood', since: 0 });
    const socket = (slow.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // The producer uses HTTP: a WebSocket driver would itself be a reader under the tiny buffer limit.
    // About 12 MiB of events: more than the kernel's socket buffers can hide.
    const runs = Array.from({ length: 12 }, () =>
      http(server, 'POST', '/processes', { body: { code: ticker(60, 16_000), ref: 'flood', block: true } }),
    );
    for (const run of await Promise.all(runs)) expect(run.body.status).toBe('success');
    socket.resume();
    const overflow = await slow.waitFor((m) => m.type === 'overflow');
    expect(overflow).toMatchObject({ subscriptions: [{ ref: 'flood' }] });
    const delivered = slow.events();
    expect(delivered.at(-1)?.seq ?? 0).toBe(overflow.type === 'overflow' && overflow.since);
    await slow.ok({
      type: 'subscribe',
      ref: 'flood',
      since: overflow.type === 'overflow' ? overflow.since : 0,
    });
    const expected = await reference({ ref: 'flood' });
    expect(slow.events().map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
  });
});
