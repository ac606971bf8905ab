import { ErrorBodySchema } from '@mci/protocol';
import type { MciServer } from '@mci/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// The MCI process API exactly as the public reference chat client calls it, the one error body of
// HTTP and WebSocket, and the request checks both interfaces share.

let server: MciServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close({ graceMs: 0 }));

async function pollIdle(pid: number) {
  for (let i = 0; i < 2400; i++) {
    const { body } = await http(server, 'GET', `/processes/${pid}`);
    if (body.state === 'idle') return body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`process ${pid} never became idle`);
}

describe('the reference chat client call sequence', { timeout: 60_000 }, () => {
  it('create, list by ref, poll, read output/stdout/stderr, kill, force re-run, delete', async () => {
    const ref = `msg-${Date.now()}`;
    const created = await http(server, 'POST', '/processes', {
      body: { code: 'console.log("out"); console.error("err"); output({ answer: 42 })', ref },
    });
    expect(created.status).toBe(201);
    const { pid } = created.body;
    expect((await http(server, 'GET', `/processes?ref=${ref}`)).body.processes).toEqual([
      expect.objectContaining({ pid, ref }),
    ]);
    expect(await pollIdle(pid)).toMatchObject({ pid, state: 'idle', status: 'success', ref });

    // One output() call: `output` is its value.
    expect((await http(server, 'GET', `/processes/${pid}/output`)).body).toEqual({
      output: { answer: 42 },
      outputs: [{ answer: 42 }],
      run: 1,
    });
    const stdout = await http(server, 'GET', `/processes/${pid}/stdout`);
    expect(stdout.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(stdout.text).toBe('out\n');
    expect((await http(server, 'GET', `/processes/${pid}/stderr`)).text).toBe('err\n');

    // kill with {} on a running process; then a forced re-run.
    const slow = (
      await http(server, 'POST', '/processes', {
        body: { code: 'output("started"); await new Promise((r) => setTimeout(r, 60000))', ref },
      })
    ).body.pid;
    for (let i = 0; i < 400; i++) {
      if ((await http(server, 'GET', `/processes/${slow}`)).body.state === 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const killed = await http(server, 'POST', `/processes/${slow}/signals/kill`, { body: {} });
    expect(killed.status).toBe(200);
    expect(killed.body.pid).toBe(slow);
    expect(await pollIdle(slow)).toMatchObject({ status: 'canceled' });
    const rerun = await http(server, 'POST', `/processes/${pid}/signals/run`, { body: { force: true } });
    expect(rerun.status).toBe(200);
    expect(rerun.body.pid).toBe(pid);
    expect(await pollIdle(pid)).toMatchObject({ status: 'success', run: 2, runs: 2 });
    const rerunPlain = await http(server, 'POST', `/processes/${pid}/signals/run`, {
      body: { force: false },
    });
    expect(rerunPlain.status).toBe(200);
    await pollIdle(pid);

    const deleted = await http(server, 'DELETE', `/processes/${pid}`);
    expect(deleted.status).toBe(200);
    const gone = await http(server, 'GET', `/processes/${pid}`);
    expect(gone.status).toBe(404);
    expect(typeof gone.body.error).toBe('string');
  });

  it('output is null without output() calls and the array with several', async () => {
    const none = (await http(server, 'POST', '/processes', { body: { code: 'const x = 1', block: true } }))
      .body;
    expect((await http(server, 'GET', `/processes/${none.pid}/output`)).body).toEqual({
      output: null,
      outputs: [],
      run: 1,
    });
    const many = (
      await http(server, 'POST', '/processes', { body: { code: 'output(1); output("two")', block: true } })
    ).body;
    expect((await http(server, 'GET', `/processes/${many.pid}/output`)).body).toMatchObject({
      output: [1, 'two'],
      outputs: [1, 'two'],
    });
  });
});

describe('one error body and one set of request checks on HTTP and WebSocket', { timeout: 60_000 }, () => {
  it('HTTP errors are {error, code, message, path?}; WebSocket errors carry the same fields', async () => {
    const unknown = await http(server, 'POST', '/processes', { body: { code: 'output(1)', colour: 'red' } });
    expect(unknown.status).toBe(400);
    expect(ErrorBodySchema.strict().parse(unknown.body)).toMatchObject({
      code: 'VALIDATION',
      error: expect.stringContaining('colour'),
      path: 'colour',
    });
    await using client = await TestClient.open(server.wsUrl);
    const wsUnknown = await client.request({
      type: 'process.create',
      code: 'output(1)',
      colour: 'red',
    } as never);
    expect(wsUnknown).toMatchObject({ type: 'error', code: 'VALIDATION', path: 'colour' });
    const { type: _type, id: _id, ...wsBody } = wsUnknown as Record<string, unknown>;
    const wsError = ErrorBodySchema.strict().parse(wsBody);
    expect(wsError).toMatchObject({ code: unknown.body.code, path: unknown.body.path });
    // HTTP says where the field was (`body: ...`); the text is otherwise the same.
    expect(unknown.body.error).toBe(`body: ${wsError.error}`);
  });

  it('empty code is refused on both', async () => {
    const empty = await http(server, 'POST', '/processes', { body: { code: '' } });
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({
      code: 'VALIDATION',
      path: 'code',
      error: expect.stringContaining('empty'),
    });
    await using client = await TestClient.open(server.wsUrl);
    expect(await client.request({ type: 'process.create', code: '  ' })).toMatchObject({
      type: 'error',
      code: 'VALIDATION',
      path: 'code',
    });
  });

  it('HTTP accepts timeoutMs as well as timeout, not both', async () => {
    const withMs = await http(server, 'POST', '/processes', {
      body: { code: 'output(1)', timeoutMs: 1234, autorun: false },
    });
    expect((await http(server, 'GET', `/processes/${withMs.body.pid}`)).body.timeoutMs).toBe(1234);
    const withTimeout = await http(server, 'POST', '/processes', {
      body: { code: 'output(1)', timeout: 2345, autorun: false },
    });
    expect((await http(server, 'GET', `/processes/${withTimeout.body.pid}`)).body.timeoutMs).toBe(2345);
    const both = await http(server, 'POST', '/processes', { body: { code: 'x', timeout: 1, timeoutMs: 2 } });
    expect(both.status).toBe(400);
  });

  it('a Python block is refused, naming the languages this server runs, never run as TypeScript', async () => {
    const python = await http(server, 'POST', '/processes', { body: { code: 'print(1)', lang: 'python' } });
    expect(python.status).toBe(400);
    expect(python.body).toMatchObject({ code: 'VALIDATION', path: 'lang' });
    expect(python.body.error).toMatch(/ts, typescript, js, javascript/);
    await using client = await TestClient.open(server.wsUrl);
    await client.ok({ type: 'stream.start', streamId: 'py-1', ref: 'py' });
    await client.ok({ type: 'stream.chunk', streamId: 'py-1', text: '```python exec=true\nprint(1)\n```\n' });
    await client.ok({ type: 'stream.end', streamId: 'py-1' });
    const result = await client.waitFor((m) => m.type === 'stream.result');
    const intent = client.events().find((e) => e.type === 'intent');
    expect(intent).toMatchObject({
      lang: 'python',
      ref: 'py',
      rejected: expect.stringMatching(/ts, typescript/),
    });
    expect(intent && 'pid' in intent && intent.pid).toBeFalsy();
    expect(result).toMatchObject({ processes: [], text: expect.stringContaining('not run') });
  });
});

describe('what the WebSocket events carry', { timeout: 60_000 }, () => {
  it('output, log and tool events carry the ref and streamId of their process', async () => {
    await using client = await TestClient.open(server.wsUrl);
    await client.ok({ type: 'stream.start', streamId: 'routed-1', ref: 'chat-7' });
    await client.ok({
      type: 'stream.chunk',
      streamId: 'routed-1',
      text: '```ts exec=true\nconsole.log("hi"); await tools.greet({ name: "x" }); output(1)\n```\n',
    });
    await client.ok({ type: 'stream.end', streamId: 'routed-1' });
    await client.waitFor((m) => m.type === 'stream.result');
    const events = client
      .events()
      .filter((e) => e.type === 'output' || e.type === 'log' || e.type === 'tool');
    expect(events.map((e) => e.type).sort()).toEqual(['log', 'output', 'tool']);
    for (const event of events) expect(event).toMatchObject({ ref: 'chat-7', streamId: 'routed-1' });
    const tool = events.find((e) => e.type === 'tool');
    const duration = tool?.type === 'tool' ? tool.durationMs : Number.NaN;
    expect(Math.round(duration * 100) / 100).toBe(duration);
  });

  it('durationMs is rounded to 0.01 ms on HTTP and WebSocket', async () => {
    await using client = await TestClient.open(server.wsUrl);
    const created = await client.ok({ type: 'process.create', code: 'for (let i = 0; i < 1e5; i++);' });
    const idle = await client.waitIdle(created.result.process.pid);
    const twoDecimals = (n: unknown) => typeof n === 'number' && Math.round(n * 100) / 100 === n;
    expect(twoDecimals(idle.durationMs)).toBe(true);
    const pid = created.result.process.pid;
    expect(twoDecimals((await http(server, 'GET', `/processes/${pid}`)).body.durationMs)).toBe(true);
    expect(twoDecimals((await http(server, 'GET', `/processes/${pid}/runs/1`)).body.durationMs)).toBe(true);
  });
});
