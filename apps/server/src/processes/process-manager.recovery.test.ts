import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualPool } from '../../test/support/manual-pool.ts';
import { createMemoryStore } from '../store/memory-store.ts';
import { createProcessManager } from './process-manager.ts';
import type { Principal } from './process-manager-types.ts';
import { INTERRUPTED_MESSAGE, KILL_GUARD_MS, WATCHDOG_SLACK_MS } from './run-controller.ts';

const alice: Principal = { id: 'alice', role: 'client' };

describe('restart on a store that already holds processes', () => {
  it('continues pids and seqs, re-queues queued processes in order, ends interrupted runs failed', async () => {
    const store = createMemoryStore();
    const firstPool = new ManualPool(1);
    const crashed = await createProcessManager({ pool: firstPool, store });
    await crashed.create({ code: 'done' }, alice);
    (await firstPool.started(1)).emit({ type: 'output', value: 'kept' });
    firstPool.executions[0]!.finish();
    await crashed.wait(1, alice);
    await crashed.create({ code: 'running' }, alice);
    (await firstPool.started(2)).emit({ type: 'output', value: 'partial' });
    // Sandbox events are delivered once per event-loop turn.
    await new Promise((resolve) => setImmediate(resolve));
    await crashed.create({ code: 'queued-a' }, alice);
    await crashed.create({ code: 'queued-b' }, alice);
    const lastSeq = crashed.lastSeq();
    // The server "crashes": the manager is abandoned without shutdown.

    const pool = new ManualPool(1);
    const restarted = await createProcessManager({ pool, store });
    expect(await restarted.get(1, alice)).toMatchObject({ status: 'success' });
    expect((await restarted.getResult(1, alice)).outputs).toEqual(['kept']);
    expect(await restarted.get(2, alice)).toMatchObject({
      state: 'idle',
      status: 'failed',
      error: { message: INTERRUPTED_MESSAGE },
    });
    expect((await restarted.getResult(2, alice)).outputs).toEqual(['partial']);
    expect((await restarted.replay(lastSeq, { pid: 2 }, alice))[0]).toMatchObject({
      type: 'process',
      seq: lastSeq + 1,
      status: 'failed',
    });
    expect(pool.executions.map((e) => e.request.code)).toEqual(['queued-a']);
    pool.executions[0]!.finish();
    (await pool.started(2)).finish();
    expect(pool.executions.map((e) => e.request.code)).toEqual(['queued-a', 'queued-b']);
    expect(await restarted.wait(4, alice)).toMatchObject({ status: 'success', run: 1 });
    expect((await restarted.create({ code: 'new', autorun: false }, alice)).pid).toBe(5);
    expect((await restarted.signal(2, 'run', alice)).run).toBe(2);
    expect(restarted.stats().byState).toEqual({
      queued: 0,
      running: 1,
      suspended: 0,
      terminating: 0,
      idle: 4,
    });
  });
});

describe('guards against a sandbox that does not answer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends a run timeout when the sandbox overruns its timeout, and canceled when a kill is not confirmed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const hung = { size: 1, execute: () => ({ result: new Promise<never>(() => {}), kill: vi.fn() }) };
    const manager = await createProcessManager({ pool: hung });
    await manager.create({ code: 'x', timeoutMs: 100 }, alice);
    vi.advanceTimersByTime(100 + WATCHDOG_SLACK_MS);
    expect(await manager.get(1, alice)).toMatchObject({
      status: 'timeout',
      error: { message: expect.stringMatching(/100 ms/) },
    });

    await manager.create({ code: 'y' }, alice);
    expect((await manager.get(2, alice)).state).toBe('running');
    await manager.signal(2, 'kill', alice);
    vi.advanceTimersByTime(KILL_GUARD_MS);
    expect(await manager.get(2, alice)).toMatchObject({ state: 'idle', status: 'canceled' });
  });
});

describe('logging', () => {
  it('logs one line per process transition, with the pid', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const pool = new ManualPool(1);
    const manager = await createProcessManager({ pool, logger: pino(sink) });
    await manager.create({ code: 'x', ref: 'r' }, alice);
    (await pool.started(1)).finish();
    await manager.wait(1, alice);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map(({ pid, state, status, msg }) => ({ pid, state, status, msg }))).toEqual([
      { pid: 1, state: 'queued', status: null, msg: 'process 1 queued' },
      { pid: 1, state: 'running', status: null, msg: 'process 1 running' },
      { pid: 1, state: 'idle', status: 'success', msg: 'process 1 idle (success)' },
    ]);
  });
});
