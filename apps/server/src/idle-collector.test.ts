import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { type IdleCollection, startIdleCollector } from './idle-collector.ts';

const MB = 1024 * 1024;

/** Allocates about 40 MB that outlives the young generation, then lets go of it. */
async function leaveGarbage(): Promise<void> {
  let kept: Array<{ n: number; text: string }> | undefined = Array.from({ length: 400_000 }, (_, n) => ({
    n,
    text: `item ${n} `.repeat(4),
  }));
  await sleep(20);
  expect(kept.length).toBe(400_000);
  kept = undefined;
}

/** Keeps the event loop busy (about 9 ms of every 10) until `until` resolves. */
async function busyUntil(until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.then(() => {
    done = true;
  });
  while (!done) {
    const end = performance.now() + 9;
    while (performance.now() < end) {
      /* spin */
    }
    await sleep(1);
  }
}

describe('startIdleCollector', () => {
  it('collects once the event loop is quiet and the heap grew, not while it is busy', async () => {
    const collected: IdleCollection[] = [];
    const collector = startIdleCollector({
      intervalMs: 50,
      minGrowthBytes: 16 * MB,
      onCollect: (collection) => collected.push(collection),
    });
    try {
      await leaveGarbage();
      await busyUntil(sleep(400));
      expect(collector.collections).toBe(0);

      const before = getHeapStatistics().total_heap_size;
      await expect.poll(() => collector.collections, { timeout: 15_000, interval: 20 }).toBe(1);
      const [collection] = collected;
      expect(collection!.usedBefore - collection!.usedAfter).toBeGreaterThan(16 * MB);
      expect(collection!.committedBefore - collection!.committedAfter).toBeGreaterThan(16 * MB);
      expect(getHeapStatistics().total_heap_size).toBeLessThan(before - 16 * MB);

      await sleep(300);
      expect(collector.collections).toBe(1);
    } finally {
      collector.stop();
    }
  });
});
