import { execFileSync } from 'node:child_process';
import type { ProcessEvent, ProcessSnapshot } from '@mci/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MciServer } from '@mci/server';
import { startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// Every state transition and signal rule of the process model, driven over the WebSocket protocol.

let server: MciServer;
let client: TestClient;

beforeAll(async () => {
  server = await startServer({ check: 'off', concurrency: 2 });
  client = await TestClient.open(server.wsUrl);
});
afterAll(async () => {
  await client?.close();
  await server?.close({ graceMs: 0 });
});

async function create(
  code: string,
  extra: { timeoutMs?: number | null; autorun?: boolean; ref?: string } = {},
) {
  const reply = await client.ok({ type: 'process.create', code, ...extra });
  return reply.result.process;
}

async function signal(pid: number, name: 'kill' | 'run', force?: boolean) {
  return client.request({ type: 'process.signal', pid, signal: name, ...(force !== undefined && { force }) });
}

const states = (pid: number, from = 0) =>
  client.messages
    .slice(from)
    .filter((m): m is ProcessEvent => m.type === 'process' && m.pid === pid)
    .map((m) => `${m.state}/${m.status ?? '-'}`);

const waitState = (pid: number, state: ProcessSnapshot['state'], from = 0) =>
  client.waitFor(
    (m) => m.type === 'process' && m.pid === pid && m.state === state,
    from,
  ) as Promise<ProcessEvent>;

describe('process lifecycle over WebSocket', { timeout: 60_000 }, () => {
  it('queued -> running -> idle/success, then a run signal makes run 2', async () => {
    const mark = client.messages.length;
    const p = await create('output(1 + 1)');
    // The reply holds the snapshot as create() returned it: queued, or already running on an idle pool.
    expect(p).toMatchObject({ status: null, run: 1, runs: 1, lang: 'ts' });
    expect(['queued', 'running']).toContain(p.state);
    const done = await client.waitIdle(p.pid, mark);
    expect(done.status).toBe('success');
    expect(states(p.pid, mark)).toEqual(['queued/-', 'running/-', 'idle/success']);
    const outputs = client.messages.slice(mark).filter((m) => m.type === 'output' && m.pid === p.pid);
    expect(outputs).toMatchObject([{ value: 2, run: 1 }]);

    const mark2 = client.messages.length;
    const rerun = await signal(p.pid, 'run', true);
    expect(rerun).toMatchObject({ type: 'reply', result: { process: { pid: p.pid, run: 2, runs: 2 } } });
    expect((await client.waitIdle(p.pid, mark2)).status).toBe('success');
    expect(client.messages.slice(mark2).filter((m) => m.type === 'output' && m.pid === p.pid)).toMatchObject([
      { value: 2, run: 2 },
    ]);
  });

  it('failed and timeout runs end idle and can run again', async () => {
    const mark = client.messages.length;
    const bad = await create('const x = 1;\nthrow new Error("boom");');
    const failed = await client.waitIdle(bad.pid, mark);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('boom'), line: 2 },
    });

    const slow = await create('await new Promise(() => {});', { timeoutMs: 300 });
    expect((await client.waitIdle(slow.pid, mark)).status).toBe('timeout');

    for (const pid of [bad.pid, slow.pid]) {
      const again = client.messages.length;
      expect(await signal(pid, 'run')).toMatchObject({ type: 'reply', result: { process: { run: 2 } } });
      expect((await client.waitIdle(pid, again)).run).toBe(2);
    }
  });

  it('kill while running a tight loop: terminating -> idle/canceled; run after cancel', async () => {
    const mark = client.messages.length;
    const loop = await create('while (true) {}', { timeoutMs: 120_000 });
    await waitState(loop.pid, 'running', mark);
    const killed = await signal(loop.pid, 'kill');
    expect(killed.type).toBe('reply');
    const idle = await client.waitIdle(loop.pid, mark);
    expect(idle.status).toBe('canceled');
    expect(states(loop.pid, mark)).toEqual(['queued/-', 'running/-', 'terminating/-', 'idle/canceled']);
    // A kill of an idle process is a conflict; a kill of a terminating one changes nothing.
    expect(await signal(loop.pid, 'kill')).toMatchObject({ type: 'error', code: 'CONFLICT' });

    const again = client.messages.length;
    await signal(loop.pid, 'run');
    await waitState(loop.pid, 'running', again);
    expect(await signal(loop.pid, 'run')).toMatchObject({ type: 'error', code: 'CONFLICT' });
    await signal(loop.pid, 'kill');
    expect((await client.waitIdle(loop.pid, again)).status).toBe('canceled');
  });

  it('kill while queued cancels at once and removes it from the queue', async () => {
    const mark = client.messages.length;
    const busy = [
      await create('while (true) {}', { timeoutMs: 120_000 }),
      await create('while (true) {}', { timeoutMs: 120_000 }),
    ];
    for (const p of busy) await waitState(p.pid, 'running', mark);
    const waiting = await create('output("never")');
    expect(waiting.state).toBe('queued');
    expect(await signal(waiting.pid, 'run')).toMatchObject({ type: 'error', code: 'CONFLICT' });
    const killed = await signal(waiting.pid, 'kill');
    expect(killed).toMatchObject({
      type: 'reply',
      result: { process: { state: 'idle', status: 'canceled' } },
    });
    expect(states(waiting.pid, mark)).toEqual(['queued/-', 'idle/canceled']);
    for (const p of busy) await signal(p.pid, 'kill');
    for (const p of busy) expect((await client.waitIdle(p.pid, mark)).status).toBe('canceled');
    expect(states(waiting.pid, mark)).toEqual(['queued/-', 'idle/canceled']);
    expect(client.messages.slice(mark).some((m) => m.type === 'output' && m.pid === waiting.pid)).toBe(false);
  });

  it('kill while awaiting a slow cli tool also kills the command', async () => {
    const mark = client.messages.length;
    const seconds = 41.37; // a value no other process on the machine uses
    const p = await create(`await tools.slow({ seconds: ${seconds} });\noutput('woke');`, {
      timeoutMs: 120_000,
    });
    await waitState(p.pid, 'running', mark);
    const sleeping = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).includes(`sleep ${seconds}`);
    for (let i = 0; !sleeping(); i++) {
      if (i > 300) throw new Error('the slow tool never started');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await signal(p.pid, 'kill');
    expect((await client.waitIdle(p.pid, mark)).status).toBe('canceled');
    for (let i = 0; sleeping(); i++) {
      if (i > 100) throw new Error('the sleep command survived the kill');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('autorun: false waits idle until a run signal', async () => {
    const mark = client.messages.length;
    const p = await create('output("later")', { autorun: false });
    expect(p).toMatchObject({ state: 'idle', status: null, run: 0, runs: 0 });
    expect(states(p.pid, mark)).toEqual(['idle/-']);
    const ran = client.messages.length;
    await signal(p.pid, 'run');
    expect(await client.waitIdle(p.pid, ran)).toMatchObject({ status: 'success', run: 1 });
  });

  it('get, list and the errors of unknown pids', async () => {
    const p = await create('output(3)', { ref: 'listing' });
    await client.waitIdle(p.pid);
    expect(await client.request({ type: 'process.get', pid: p.pid })).toMatchObject({
      result: { process: { pid: p.pid, ref: 'listing' } },
    });
    const list = await client.ok({ type: 'process.list', ref: 'listing', status: 'success' });
    expect(list.result.processes.map((x) => x.pid)).toEqual([p.pid]);
    expect(await client.request({ type: 'process.get', pid: 999_999 })).toMatchObject({
      type: 'error',
      code: 'NOT_FOUND',
    });
    expect(await signal(999_999, 'kill')).toMatchObject({ type: 'error', code: 'NOT_FOUND' });
  });
});
