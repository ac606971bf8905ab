import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../src/auth/authenticator.ts';
import { LimitsSchema } from '../src/config/config-schema.ts';
import { HEALTH_RESERVE } from '../src/http/connection-caps.ts';
import { type Listener, listen } from '../src/listener.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import { ManualPool } from './support/manual-pool.ts';

// Slow and greedy HTTP clients: header and request timeouts, a connection cap and a per-principal
// request rate, over real sockets.

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function setup(limits: Record<string, number>) {
  const manager = await createProcessManager({ pool: new ManualPool(1) });
  const listener: Listener = await listen({
    manager,
    authenticator: createAuthenticator([]),
    tools: [],
    limits: LimitsSchema.parse(limits),
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: 60_000,
  });
  open.push({ close: () => listener.close() });
  return listener;
}

/** A raw socket and everything it receives until the server closes it. */
function rawSocket(listener: Listener): { socket: Socket; closed: Promise<string> } {
  const socket = connect(listener.port, '127.0.0.1');
  open.push({ close: () => socket.destroy() });
  let received = '';
  socket.on('data', (data) => {
    received += data.toString();
  });
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  return { socket, closed };
}

describe('HTTP limits', () => {
  it('answers 408 and closes a request whose body never finishes', async () => {
    const listener = await setup({ requestTimeoutMs: 1000, headersTimeoutMs: 500 });
    const { socket, closed } = rawSocket(listener);
    socket.write(
      'POST /processes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"code":',
    );
    expect(await closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection whose headers never finish', async () => {
    const listener = await setup({ requestTimeoutMs: 2000, headersTimeoutMs: 500 });
    const { socket, closed } = rawSocket(listener);
    socket.write('GET /processes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    // Left open, the socket would never close and the test would end at its timeout.
    await closed;
  });

  it('past the cap answers only /healthz on a few more sockets, closes the rest at once, and serves again when some close', async () => {
    const listener = await setup({ maxConnections: 3 });
    const connected = (raw: { socket: Socket }) =>
      new Promise((resolve) => raw.socket.once('connect', resolve));
    const held = Array.from({ length: 3 }, () => rawSocket(listener));
    await Promise.all(held.map(connected));
    // Let the server accept all three before the next come.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const reserve = Array.from({ length: HEALTH_RESERVE }, () => rawSocket(listener));
    await Promise.all(reserve.map(connected));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const extra = rawSocket(listener);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await extra.closed).toBe('');
    reserve[0]!.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(await reserve[0]!.closed).toMatch(/^HTTP\/1\.1 200/);
    reserve[1]!.socket.write('GET /processes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await reserve[1]!.closed).toMatch(/^HTTP\/1\.1 503[\s\S]*LIMIT_EXCEEDED/);
    for (const { socket } of [...held, ...reserve]) socket.destroy();
    await Promise.all(held.map(({ closed }) => closed));
    const response = await fetch(`${listener.url}/processes`);
    expect(response.status).toBe(200);
  });

  it('limits the requests of one principal per second: 429 RATE_LIMITED with Retry-After', async () => {
    const listener = await setup({ rateLimitPerSecond: 5 });
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await fetch(`${listener.url}/processes`));
    const limited = answers.filter((response) => response.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited[0]!.json()).toMatchObject({ code: 'RATE_LIMITED' });
    // /healthz is never limited.
    expect((await fetch(`${listener.url}/healthz`)).status).toBe(200);
  });
});
