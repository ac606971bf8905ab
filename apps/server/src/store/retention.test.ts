import { describe, expect, it, vi } from 'vitest';
import type { StoredProcess } from '../processes/process-store.ts';
import { startRetention } from './retention.ts';
import { openSqliteStore } from './sql/open-sqlite.ts';

const record = (pid: number, state: StoredProcess['state'] = 'idle'): StoredProcess => ({
  pid,
  owner: 'alice',
  code: 'x',
  lang: 'ts',
  createdAt: '2026-01-01T00:00:00.000Z',
  timeoutMs: 1000,
  memoryLimitMb: 64,
  state,
  status: null,
  runs: 0,
});

describe('retention', () => {
  it('sweeps at start and keeps sweeping a backlog in steps, skipping what cannot be deleted', async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    for (let pid = 1; pid <= 1200; pid++) store.putProcess(record(pid));
    store.putProcess(record(1201, 'running'));
    const removed: number[] = [];
    const retention = startRetention(
      store,
      (pid) => {
        if (pid === 7) throw new Error('run again meanwhile');
        removed.push(pid);
        store.deleteProcess(pid);
      },
      { maxAgeMs: 3_600_000, maxProcesses: 100 },
    );
    try {
      // 1201 processes, 100 kept: 1101 expire, oldest first, 500 a step, on consecutive timer turns.
      await vi.waitFor(() => expect(removed.length).toBe(1100), { timeout: 10_000 });
      expect(removed.slice(0, 7)).toEqual([1, 2, 3, 4, 5, 6, 8]);
      expect(await store.listProcesses({ state: 'running' })).toHaveLength(1);
    } finally {
      retention.stop();
      await store.close();
    }
  });

  it('reports a failing sweep and tries again at the next interval', async () => {
    const errors: unknown[] = [];
    const failing = {
      expiredProcesses: async (): Promise<number[]> => {
        throw new Error('disk gone');
      },
      deleteUnownedEvents: () => {},
    };
    const retention = startRetention(failing, () => {}, { intervalMs: 5, onError: (e) => errors.push(e) });
    try {
      await vi.waitFor(() => expect(errors.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
      expect(errors[0]).toMatchObject({ message: 'disk gone' });
    } finally {
      retention.stop();
    }
  });

  it('rejects options that are not positive', async () => {
    const store = { expiredProcesses: async () => [], deleteUnownedEvents: () => {} };
    expect(() => startRetention(store, () => {}, { maxAgeMs: 0 })).toThrow(
      /retention maxAgeMs must be positive/,
    );
    expect(() => startRetention(store, () => {}, { maxProcesses: -1 })).toThrow(/maxProcesses/);
  });
});
