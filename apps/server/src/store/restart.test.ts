import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerEvent } from '@mci/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualPool } from '../../test/support/manual-pool.ts';
import { createProcessManager } from '../processes/process-manager.ts';
import type { ExecutionPool, Principal } from '../processes/process-manager-types.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import { startRetention } from './retention.ts';
import { openSqliteStore } from './sql/open-sqlite.ts';
import type { SqlProcessStore } from './sql/sql-store.ts';

// Restart semantics through the process manager's public API, over a pool the test drives. The same
// story with a real `mci serve` killed with SIGKILL is in test/crash-restart.slow.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'mci-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const alice: Principal = { id: 'alice', role: 'client' };
const root: Principal = { id: 'root', role: 'operator' };

/** A store that stops persisting at `crash()`, as if the server died there (later writes are lost). */
function crashable(store: SqlProcessStore): { store: ProcessStore; crash(): Promise<void> } {
  let crashed = false;
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (crashed ? undefined : value.apply(target, args));
    },
  });
  return {
    store: proxy,
    async crash() {
      store.flush();
      crashed = true;
      await store.close();
    },
  };
}

/** A pool whose kill never lands (a sandbox that hangs), so a killed run stays `terminating`. */
function stuckKills(pool: ManualPool): ExecutionPool {
  return {
    size: pool.size,
    execute: (request) => {
      const execution = pool.execute(request);
      return { result: execution.result, kill() {} };
    },
  };
}

describe('restart on the SQLite store', () => {
  it('re-queues queued processes in order, fails interrupted runs, keeps outputs, continues pids and seqs', async () => {
    const path = join(dir, 'restart.db');
    const before = crashable(await openSqliteStore({ path }));
    const pool = new ManualPool(2);
    const manager = await createProcessManager({
      pool: stuckKills(pool),
      store: before.store,
      concurrency: 2,
    });
    const seen: ServerEvent[] = [];
    manager.onEvent((event) => seen.push(event));

    // pid 1 finishes with outputs and logs.
    await manager.create({ code: 'done', ref: 'chat' }, alice);
    const first = await pool.started(1);
    first.emit({ type: 'output', value: { answer: 42 } });
    first.emit({ type: 'log', stream: 'stdout', text: 'one\n' });
    first.finish();
    await manager.wait(1, alice);
    // pid 2 runs a long loop (partial output), pid 3 is being killed, pids 4 and 5 wait behind them.
    await manager.create({ code: 'loop' }, alice);
    await manager.create({ code: 'killed' }, root);
    const running = await pool.started(2);
    running.emit({ type: 'output', value: 'partial' });
    running.emit({ type: 'log', stream: 'stderr', text: 'half' });
    // Sandbox events are delivered once per event-loop turn.
    await new Promise((resolve) => setImmediate(resolve));
    await pool.started(3);
    await manager.signal(3, 'kill', root);
    await manager.create({ code: 'queued a' }, alice);
    await manager.create({ code: 'queued b', autorun: false }, alice);
    await manager.create({ code: 'queued c' }, alice);
    await manager.signal(5, 'run', alice); // queued after 6: the queue order is 4, 6, 5
    expect((await manager.list({}, root)).items.map((p) => [p.pid, p.state])).toEqual([
      [6, 'queued'],
      [5, 'queued'],
      [4, 'queued'],
      [3, 'terminating'],
      [2, 'running'],
      [1, 'idle'],
    ]);
    const lastSeq = seen.at(-1)!.seq;
    await before.crash();

    const store = await openSqliteStore({ path });
    const nextPool = new ManualPool(1);
    const restarted = await createProcessManager({ pool: nextPool, store, concurrency: 1 });
    try {
      expect(await restarted.get(1, alice)).toMatchObject({ state: 'idle', status: 'success', ref: 'chat' });
      expect(await restarted.getRun(1, 1, alice)).toMatchObject({
        outputs: [{ answer: 42 }],
        stdout: 'one\n',
      });
      for (const pid of [2, 3]) {
        expect(await restarted.get(pid, root)).toMatchObject({
          state: 'idle',
          status: 'failed',
          error: { message: 'interrupted: the server stopped during this run' },
        });
      }
      expect(await restarted.getRun(2, 1, alice)).toMatchObject({ outputs: ['partial'], stderr: 'half' });
      // Queued ones run again in their original order, one at a time (concurrency 1 now).
      const order: string[] = [];
      for (let n = 1; n <= 3; n++) {
        const execution = await nextPool.started(n);
        order.push(execution.request.code);
        execution.finish();
      }
      expect(order).toEqual(['queued a', 'queued c', 'queued b']);
      await restarted.wait(5, alice);
      // pids and seqs continue; replay from the last seq seen before the crash gives what happened since.
      expect((await restarted.create({ code: 'after' }, alice)).pid).toBe(7);
      const missed = await restarted.replay(lastSeq, { all: true }, root);
      expect(missed.length).toBeGreaterThan(0);
      expect(missed[0]!.seq).toBe(lastSeq + 1);
      expect(
        missed
          .filter((e) => e.type === 'process' && e.pid === 2)
          .map((e) => e.type === 'process' && e.status),
      ).toEqual(['failed']);
      // An interrupted process can be run again: run 2 (queued behind pid 7), with run 1 still readable.
      const after = await nextPool.started(4);
      expect(await restarted.signal(2, 'run', alice)).toMatchObject({ state: 'queued', run: 2 });
      after.finish();
      await nextPool.started(5).then((execution) => execution.finish());
      expect(await restarted.wait(2, alice)).toMatchObject({ state: 'idle', status: 'success', run: 2 });
      expect(await restarted.getRun(2, 1, alice)).toMatchObject({ status: 'failed', outputs: ['partial'] });
    } finally {
      await restarted.shutdown({ graceMs: 0 });
    }
  });

  it('retention deletes expired idle processes through the manager, so its counts follow', async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    const pool = new ManualPool(1);
    const manager = await createProcessManager({ pool, store });
    for (let i = 0; i < 3; i++) await manager.create({ code: `p${i}`, autorun: false }, alice);
    await manager.create({ code: 'runs' }, alice);
    await pool.started(1);
    const retention = startRetention(store, (pid) => manager.delete(pid, root), {
      maxAgeMs: 1000,
      intervalMs: 3_600_000,
    });
    try {
      expect(await retention.sweep(Date.now())).toBe(0);
      expect(await retention.sweep(Date.now() + 2000)).toBe(3);
      expect((await manager.list({}, root)).items.map((p) => p.pid)).toEqual([4]);
      expect(manager.stats().byState).toMatchObject({ idle: 0, running: 1 });
      await expect(manager.get(1, root)).rejects.toThrow(/not found/);
    } finally {
      retention.stop();
      pool.executions[0]!.finish();
      await manager.shutdown({ graceMs: 0 });
    }
  });
});
