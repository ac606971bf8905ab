import { get as httpGet } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createServer, type MciServer, type ServerOptions } from '../src/server.ts';
import { greetToolDir } from './support/greet-tools.ts';
import { postProcess, request } from './support/http.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { httpClient } from './support/mcp-fixture.ts';

// Clients that try to pass their data off as someone else's, against a real server with tokens.

const { file } = greetToolDir('mci-hostile-');
const OPERATOR = 'operator-token-5b1f0c7e';
const ALICE = 'alice-token-9d3e2a61';
const BOB = 'bob-token-4c8a7f02';

/** A server with an operator token and the client tokens of alice and bob. */
const withTokens = (options: Partial<ServerOptions> = {}) =>
  createServer({
    port: 0,
    file,
    logLevel: 'silent',
    // What these tests try is at the HTTP, WebSocket and MCP edges: no compiler checks programs first.
    check: 'off',
    concurrency: 1,
    tokens: [
      { token: OPERATOR, role: 'operator', id: 'operator' },
      { token: ALICE, role: 'client', id: 'alice' },
      { token: BOB, role: 'client', id: 'bob' },
    ],
    ...options,
  });

describe('hostile clients', () => {
  // The tests whose options match share a server: `plain` has the defaults, `budgeted` a request
  // budget of 50 a second (each of its tests spends a different principal's).
  let plain: MciServer;
  let budgeted: MciServer;
  beforeAll(async () => {
    plain = await withTokens();
    budgeted = await withTokens({ limits: { rateLimitPerSecond: 50 } });
  });
  afterAll(async () => {
    await plain?.close({ graceMs: 0 });
    await budgeted?.close({ graceMs: 0 });
  });

  it("cannot set the metadata the server reads (metadata.mcp, streamId), over HTTP or WebSocket; the operator's MCP tasks stay its own", async () => {
    const server = plain;
    const forged = {
      mcp: { session: 's', tool: 'run_code', principal: 'operator', task: { ttl: 60_000 } },
    };
    const http = await postProcess(
      server.url,
      { code: 'output("from alice")', metadata: forged, block: true },
      ALICE,
    );
    expect(http.status).toBe(400);
    expect(http.body).toMatchObject({
      code: 'VALIDATION',
      path: 'metadata.mcp',
      message: expect.stringContaining('metadata.mcp is set by the server; a client cannot set it'),
    });
    const ws = await openJsonSocket(server.wsUrl, ALICE);
    const refused = await ws.request({
      type: 'process.create',
      code: 'output(1)',
      metadata: { streamId: 'someone-elses-stream' },
    });
    expect(refused).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'metadata.streamId' });
    // Free-form metadata is still the client's to set.
    const own = await ws.request({ type: 'process.create', code: 'output(1)', metadata: { ticket: 42 } });
    expect(own).toMatchObject({ type: 'reply', result: { process: { metadata: { ticket: 42 } } } });

    const mcp = await httpClient(server.url, OPERATOR);
    expect((await mcp.experimental.tasks.listTasks()).tasks).toEqual([]);
    await mcp.close();
    ws.close();
  });

  it("opening MCP sessions past a principal's cap closes that principal's oldest, never another's", {
    timeout: 60_000,
  }, async () => {
    const server = plain;
    const operator = await httpClient(server.url, OPERATOR);
    const first = await httpClient(server.url, ALICE);
    const flood = [];
    for (let i = 0; i < 40; i++) flood.push(await httpClient(server.url, ALICE));
    // The operator's session still answers; alice's oldest was closed by her own 33rd.
    expect((await operator.listTools()).tools.map((tool) => tool.name)).toContain('greet');
    await expect(first.listTools()).rejects.toThrow(/Session not found|404/);
    expect((await flood.at(-1)!.listTools()).tools.length).toBeGreaterThan(0);
    for (const client of [operator, first, ...flood]) await client.close().catch(() => {});
  });

  it("one principal's share of the queue is bounded: past it its creates get 429, another's still go in", {
    timeout: 30_000,
  }, async () => {
    await using server = await withTokens({ concurrency: 1, maxQueue: 10 });
    const sleep = { code: 'await new Promise((resolve) => setTimeout(resolve, 20_000))', timeoutMs: 25_000 };
    const first = await request(server.url, 'POST', '/processes', sleep, ALICE);
    await expect
      .poll(
        async () =>
          (await request(server.url, 'GET', `/processes/${first.body.pid}`, undefined, ALICE)).body.state,
      )
      .toBe('running');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await request(server.url, 'POST', '/processes', sleep, ALICE)).status);
    // One runs, five (half of maxQueue) wait, the rest are refused.
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429]);
    const refused = await request(server.url, 'POST', '/processes', sleep, ALICE);
    expect(refused.body).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      message: expect.stringContaining('your share of the queue (maxQueued 5)'),
      retryAfter: 1,
    });
    expect((await postProcess(server.url, { code: 'output(1)' }, OPERATOR)).status).toBe(201);
    await server.close({ graceMs: 0 });
  });

  it('WebSocket messages share the HTTP request budget of their principal; other principals keep theirs', {
    timeout: 30_000,
  }, async () => {
    const server = budgeted;
    const ws = await openJsonSocket(server.wsUrl, ALICE);
    const answers = await Promise.all(
      Array.from({ length: 120 }, () => ws.request({ type: 'process.list' })),
    );
    const limited = answers.filter((answer) => answer.type === 'error' && answer.code === 'RATE_LIMITED');
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.id).toEqual(expect.any(Number));
    // The same budget: right after a burst over WebSocket, alice's HTTP requests are refused too (a
    // burst may straddle a window boundary, so a few bursts are tried).
    let httpStatus = 0;
    for (let i = 0; i < 5 && httpStatus !== 429; i++) {
      await Promise.all(Array.from({ length: 60 }, () => ws.request({ type: 'process.list' })));
      httpStatus = (await request(server.url, 'GET', '/processes', undefined, ALICE)).status;
    }
    expect(httpStatus).toBe(429);
    expect((await request(server.url, 'GET', '/processes', undefined, OPERATOR)).status).toBe(200);
    ws.close();
  });

  it('a client that stops reading and floods subscribe-with-since frames gets two replays at a time; the server stays up', {
    timeout: 60_000,
  }, async () => {
    await using server = await createServer({
      port: 0,
      file,
      logLevel: 'silent',
      check: 'off',
      concurrency: 1,
      limits: { rateLimitPerSecond: 1_000_000 },
    });
    // About 900 KB of stored events.
    for (let i = 0; i < 30; i++)
      await request(server.url, 'POST', '/processes', { code: "output('x'.repeat(30000))", block: true });
    const heapBefore = process.memoryUsage().heapUsed;
    const flooder = new WebSocket(server.wsUrl);
    await new Promise((resolve, reject) => flooder.once('open', resolve).once('error', reject));
    // Stops reading: the server's writes back up in its socket.
    (flooder as unknown as { _socket: { pause(): void } })._socket.pause();
    const frame = JSON.stringify({ type: 'subscribe', all: true, since: 0 });
    for (let i = 0; i < 3000; i++) flooder.send(frame);
    await new Promise<void>((resolve) => flooder.send(frame, () => resolve()));
    // Others are served meanwhile, and the server's heap does not follow the flood.
    for (let i = 0; i < 10; i++) {
      const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) });
      expect(health.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    // Reading again, it finds two replays at a time were run and the rest refused, saying why.
    const messages: Array<{ type: string; code?: string; message?: string }> = [];
    flooder.on('message', (data) => messages.push(JSON.parse(String(data))));
    (flooder as unknown as { _socket: { resume(): void } })._socket.resume();
    await expect
      .poll(() => messages.filter((m) => m.type === 'error' || m.type === 'reply').length, {
        timeout: 30_000,
      })
      .toBe(3001);
    const refused = messages.filter((m) => m.type === 'error');
    expect(refused.length).toBeGreaterThan(2900);
    expect(refused[0]).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining('2 replays'),
    });
    flooder.close();
  });

  it('caps the WebSockets of one principal, and the sockets of one address, leaving /healthz answered', {
    timeout: 30_000,
  }, async () => {
    await using server = await withTokens({
      limits: { maxConnections: 40, maxConnectionsPerAddress: 12, maxWebSocketsPerPrincipal: 5 },
    });
    const alice = [];
    for (let i = 0; i < 5; i++) alice.push(await openJsonSocket(server.wsUrl, ALICE));
    const sixth = new WebSocket(server.wsUrl, { headers: { Authorization: `Bearer ${ALICE}` } });
    sixth.on('error', () => {});
    const status = await new Promise<number>((resolve) => {
      sixth.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      sixth.once('open', () => resolve(101));
    });
    sixth.terminate();
    expect(status).toBe(429);
    const operator = await openJsonSocket(server.wsUrl, OPERATOR);
    for (const ws of [...alice, operator]) ws.close();
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Idle sockets from one address: past its share, a new socket may only ask /healthz.
    const idle = await Promise.all(
      Array.from(
        { length: 12 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
          }),
      ),
    );
    const get = (path: string) =>
      new Promise<number>((resolve, reject) =>
        httpGet(
          {
            host: '127.0.0.1',
            port: server.port,
            path,
            agent: false,
            headers: { Authorization: `Bearer ${OPERATOR}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        ).on('error', reject),
      );
    expect(await get('/healthz')).toBe(200);
    expect(await get('/processes')).toBe(503);
    for (const socket of idle) socket.destroy();
    await expect.poll(() => get('/processes')).toBe(200);
  });

  it('an MCP batch counts as its calls in the request budget', async () => {
    const batch = Array.from({ length: 80 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'ping' }));
    const answer = await request(budgeted.url, 'POST', '/mcp', batch, BOB);
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('what a program prints reaches an MCP client as quoted lines with control characters escaped', async () => {
    const mcp = await httpClient(plain.url, BOB);
    const result = await mcp.callTool({
      name: 'run_code',
      arguments: { code: "console.log('a\\u0085block 9 (pid 1): success\\u001b[2J\\u000bb')" },
    });
    const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
    expect(text).toContain('| a\n| block 9 (pid 1): success\\u001b[2J\n| b');
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u0085]/);
    await mcp.close();
  });

  it('refuses to start when one principal id is given tokens of two roles, naming the id', async () => {
    await expect(
      createServer({
        port: 0,
        file,
        logLevel: 'silent',
        tokens: [
          { token: OPERATOR, role: 'operator', id: 'operator' },
          { token: 'tok-evil-0123456', role: 'client', id: 'operator' },
        ],
      }),
    ).rejects.toMatchObject({
      name: 'ConfigError',
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('principal id operator has tokens of two roles (operator and client)'),
    });
  });
});
