import type { MciServer } from '@mci/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startServer } from '../support/start-server.ts';

// The MCI process API over real HTTP: every route, the signal rules, and validation errors.

let server: MciServer;
beforeAll(async () => {
  server = await startServer({
    check: 'off',
    concurrency: 2,
    limits: { maxBodyBytes: 200_000, maxCodeBytes: 100 * 1024 },
  });
});
afterAll(() => server?.close({ graceMs: 0 }));

async function waitFor(pid: number, state: string, on: { url: string } = server) {
  for (let i = 0; i < 2400; i++) {
    const { body } = await http(on, 'GET', `/processes/${pid}`);
    if (body.state === state) return body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`process ${pid} never reached ${state}`);
}

describe('HTTP process API', { timeout: 60_000 }, () => {
  it('POST /processes -> 201 {pid}; block: true waits for the final snapshot with outputs', async () => {
    const created = await http(server, 'POST', '/processes', { body: { code: 'output(1 + 1)' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual(['pid']);
    const done = await waitFor(created.body.pid, 'idle');
    expect(done).toMatchObject({ pid: created.body.pid, status: 'success', run: 1, runs: 1 });
    expect(typeof done.createdAt).toBe('string');

    const blocked = await http(server, 'POST', '/processes', {
      body: {
        code: 'console.log("hi"); console.error("warn"); output({ a: 1 }); output([2]);',
        block: true,
        ref: 'r1',
      },
    });
    expect(blocked.status).toBe(201);
    expect(blocked.body).toMatchObject({
      state: 'idle',
      status: 'success',
      ref: 'r1',
      outputs: [{ a: 1 }, [2]],
    });
    const pid = blocked.body.pid;
    expect((await http(server, 'GET', `/processes/${pid}/code`)).text).toContain('console.log("hi")');
    expect((await http(server, 'GET', `/processes/${pid}/output`)).body).toEqual({
      output: [{ a: 1 }, [2]],
      outputs: [{ a: 1 }, [2]],
      run: 1,
    });
    const stdout = await http(server, 'GET', `/processes/${pid}/stdout`);
    expect(stdout.text).toBe('hi\n');
    expect(stdout.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await http(server, 'GET', `/processes/${pid}/stderr`)).text).toBe('warn\n');
  });

  it('timeout validation names the field; null means the server maximum', async () => {
    for (const timeout of [0, -5, 1.5, '100', true, {}]) {
      const res = await http(server, 'POST', '/processes', { body: { code: 'output(1)', timeout } });
      expect(res.status, JSON.stringify(timeout)).toBe(400);
      expect(res.body).toMatchObject({
        code: 'VALIDATION',
        path: 'timeout',
        error: expect.stringContaining('timeout'),
      });
    }
    const max = await http(server, 'POST', '/processes', {
      body: { code: 'output(1)', timeout: null, block: true },
    });
    expect(max.body.timeoutMs).toBe(300_000);
    const clamped = await http(server, 'POST', '/processes', {
      body: { code: 'output(1)', timeout: 10 ** 9, block: true },
    });
    expect(clamped.body.timeoutMs).toBe(300_000);
    const missing = await http(server, 'POST', '/processes', { body: { ref: 'x' } });
    expect(missing).toMatchObject({ status: 400, body: { code: 'VALIDATION', path: 'code' } });
    const badJson = await http(server, 'POST', '/processes', { raw: '{"code": ' });
    expect(badJson).toMatchObject({ status: 400, body: { code: 'VALIDATION' } });
    const badRef = await http(server, 'POST', '/processes', { body: { code: 'x', ref: '  ' } });
    expect(badRef).toMatchObject({ status: 400, body: { path: 'ref' } });
  });

  it('runs, signals, 409s and delete', async () => {
    const failing = await http(server, 'POST', '/processes', {
      body: { code: 'throw new Error("nope")', block: true },
    });
    expect(failing.body).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('nope'), line: 1 },
    });
    const pid = failing.body.pid;
    const rerun = await http(server, 'POST', `/processes/${pid}/signals/run`, {
      body: { force: true, block: true },
    });
    expect(rerun).toMatchObject({ status: 200, body: { run: 2, runs: 2, status: 'failed' } });
    expect((await http(server, 'GET', `/processes/${pid}/runs/1`)).body).toMatchObject({
      run: 1,
      status: 'failed',
      outputs: [],
    });
    expect((await http(server, 'GET', `/processes/${pid}/runs/3`)).status).toBe(404);
    expect((await http(server, 'POST', `/processes/${pid}/signals/kill`)).status).toBe(409);

    const loop = await http(server, 'POST', '/processes', {
      body: { code: 'while (true) {}', timeout: 120_000 },
    });
    await waitFor(loop.body.pid, 'running');
    expect((await http(server, 'POST', `/processes/${loop.body.pid}/signals/run`, { body: {} })).status).toBe(
      409,
    );
    expect((await http(server, 'DELETE', `/processes/${loop.body.pid}`)).status).toBe(409);
    const killed = await http(server, 'POST', `/processes/${loop.body.pid}/signals/kill`, { body: {} });
    expect(killed.status).toBe(200);
    expect(['terminating', 'idle']).toContain(killed.body.state);
    expect(await waitFor(loop.body.pid, 'idle')).toMatchObject({ status: 'canceled' });

    const deleted = await http(server, 'DELETE', `/processes/${loop.body.pid}`);
    expect(deleted).toMatchObject({ status: 200, body: { pid: loop.body.pid, deleted: true } });
    expect((await http(server, 'GET', `/processes/${loop.body.pid}`)).status).toBe(404);
    expect((await http(server, 'POST', `/processes/${pid}/signals/stop`, { body: {} })).body).toMatchObject({
      code: 'VALIDATION',
      path: 'signal',
    });
    expect((await http(server, 'GET', '/processes/abc')).body).toMatchObject({
      code: 'VALIDATION',
      path: 'pid',
    });
  });

  it('kill while queued cancels at once; run after timeout and after cancel', async () => {
    const loops = [];
    for (let i = 0; i < 2; i++) {
      loops.push(
        (await http(server, 'POST', '/processes', { body: { code: 'while (true) {}', timeout: 120_000 } }))
          .body.pid,
      );
    }
    for (const pid of loops) await waitFor(pid, 'running');
    const queued = (await http(server, 'POST', '/processes', { body: { code: 'output("late")' } })).body.pid;
    expect((await http(server, 'GET', `/processes/${queued}`)).body.state).toBe('queued');
    const killed = await http(server, 'POST', `/processes/${queued}/signals/kill`);
    expect(killed).toMatchObject({ status: 200, body: { state: 'idle', status: 'canceled' } });
    for (const pid of loops) await http(server, 'POST', `/processes/${pid}/signals/kill`);
    for (const pid of loops) expect(await waitFor(pid, 'idle')).toMatchObject({ status: 'canceled' });

    const rerun = await http(server, 'POST', `/processes/${queued}/signals/run`, { body: { block: true } });
    expect(rerun.body).toMatchObject({ status: 'success', run: 2, outputs: ['late'] });
    expect((await http(server, 'GET', `/processes/${queued}/runs/1`)).body).toMatchObject({
      status: 'canceled',
    });

    const slow = await http(server, 'POST', '/processes', {
      body: { code: 'await new Promise(() => {})', timeout: 200, block: true },
    });
    expect(slow.body).toMatchObject({ status: 'timeout' });
    const again = await http(server, 'POST', `/processes/${slow.body.pid}/signals/run`, {
      body: { block: true },
    });
    expect(again.body).toMatchObject({ status: 'timeout', run: 2, runs: 2 });
  });

  it('lists newest first with filters, and validates the query', async () => {
    const a = (
      await http(server, 'POST', '/processes', { body: { code: 'output(1)', ref: 'list-me', block: true } })
    ).body;
    const b = (
      await http(server, 'POST', '/processes', { body: { code: 'throw 1', ref: 'list-me', block: true } })
    ).body;
    const all = await http(server, 'GET', '/processes?ref=list-me');
    expect(all.body.processes.map((p: { pid: number }) => p.pid)).toEqual([b.pid, a.pid]);
    const failed = await http(server, 'GET', '/processes?ref=list-me&status=failed&state=idle');
    expect(failed.body.processes.map((p: { pid: number }) => p.pid)).toEqual([b.pid]);
    expect((await http(server, 'GET', '/processes?state=sleeping')).body).toMatchObject({
      code: 'VALIDATION',
      path: 'state',
    });
  });

  it('413 for big bodies and code over the limit; 404 for unknown routes', async () => {
    const huge = await http(server, 'POST', '/processes', { body: { code: `//${'x'.repeat(300_000)}` } });
    expect(huge).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
    const bigCode = await http(server, 'POST', '/processes', {
      body: { code: `//${'x'.repeat(110 * 1024)}` },
    });
    expect(bigCode).toMatchObject({ status: 413, body: { code: 'CODE_TOO_LARGE' } });
    expect(await http(server, 'GET', '/nope')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
  });

  it('GET /tools, /tools.d.ts, /healthz and /metrics', async () => {
    const tools = await http(server, 'GET', '/tools');
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['greet', 'read_notes', 'shout', 'slow', 'get_item', 'inventory_url']),
    );
    const dts = await http(server, 'GET', '/tools.d.ts');
    expect(dts.text).toContain('declare const output: {\n  (value: unknown): void;');
    expect(dts.text).toContain('greet(props: {');
    expect(dts.text).toContain('get_item(props: {');
    expect(await http(server, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const metrics = await http(server, 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^mci_processes\{state="idle"\} \d+$/m);
    expect(metrics.text).toMatch(/^mci_processes_by_status\{status="success"\} [1-9]\d*$/m);
    expect(metrics.text).toMatch(/^mci_run_duration_seconds_count [1-9]\d*$/m);
    expect(metrics.text).toMatch(/^mci_queue_length 0$/m);
    expect(metrics.text).toMatch(/^mci_tool_calls_total \d+$/m);
  });

  it('429 QUEUE_FULL past the queue limit', async () => {
    await using small = await startServer({ check: 'off', concurrency: 1, maxQueue: 1 });
    const loop = (
      await http(small, 'POST', '/processes', { body: { code: 'while (true) {}', timeout: 120_000 } })
    ).body.pid;
    const queued = await http(small, 'POST', '/processes', { body: { code: 'output(1)' } });
    expect(queued.status).toBe(201);
    const refused = await http(small, 'POST', '/processes', { body: { code: 'output(2)' } });
    expect(refused).toMatchObject({ status: 429, body: { code: 'QUEUE_FULL' } });
    const later = await http(small, 'POST', '/processes', { body: { code: 'output(3)', autorun: false } });
    expect(later.status).toBe(201); // not queued, so not refused
    expect((await http(small, 'POST', `/processes/${later.body.pid}/signals/run`)).status).toBe(429);
    await http(small, 'POST', `/processes/${loop}/signals/kill`);
    await waitFor(queued.body.pid, 'idle', small); // the queue is empty again
    const done = await http(small, 'POST', `/processes/${later.body.pid}/signals/run`, {
      body: { block: true },
    });
    expect(done.body).toMatchObject({ status: 'success', outputs: [3] });
  });
});
