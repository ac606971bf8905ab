import { describe, expect, it } from 'vitest';
import { describeProcessStoreContract } from '../../test/support/store-contract.ts';
import { createMemoryStore } from './memory-store.ts';

describeProcessStoreContract('memory', () => createMemoryStore());

describe('memory store', () => {
  it('keeps at most about maxEvents events, dropping the oldest', async () => {
    const store = createMemoryStore({ maxEvents: 10 });
    for (let seq = 1; seq <= 100; seq++) {
      store.appendEvent(
        { type: 'log', seq, pid: 1, run: 1, stream: 'stdout', text: `${seq}` },
        { owner: 'a', pid: 1 },
      );
    }
    const kept = (await store.eventsSince(0, {})).map((e) => e.event.seq);
    expect(kept.length).toBeGreaterThanOrEqual(10);
    expect(kept.length).toBeLessThanOrEqual(11);
    expect(kept.at(-1)).toBe(100);
    expect((await store.eventsSince(95, {})).map((e) => e.event.seq)).toEqual([96, 97, 98, 99, 100]);
    expect(() => createMemoryStore({ maxEvents: 0 })).toThrow(/maxEvents/);
  });
});
