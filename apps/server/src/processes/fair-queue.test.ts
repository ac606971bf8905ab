import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FairQueue } from './fair-queue.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('FairQueue', () => {
  it('takes round-robin across principals, FIFO within one, skipping deleted items', () => {
    const queue = new FairQueue<string>();
    for (const item of ['a1', 'a2', 'a3']) queue.push('a', item);
    for (const item of ['b1', 'b2']) queue.push('b', item);
    queue.delete('a2');
    const order: string[] = [];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) order.push(next.item);
    expect(order).toEqual(['a1', 'b1', 'a3', 'b2']);
    expect(queue.length).toBe(0);
  });

  it('passes over principals that are not eligible, keeping their turn', () => {
    const queue = new FairQueue<string>();
    for (const item of ['a1', 'a2']) queue.push('a', item);
    for (const item of ['b1', 'b2']) queue.push('b', item);
    expect(queue.shift((principal) => principal !== 'a')).toEqual({ item: 'b1', principal: 'b' });
    expect(queue.shift((principal) => principal !== 'a')).toEqual({ item: 'b2', principal: 'b' });
    expect(queue.shift((principal) => principal !== 'a')).toBeUndefined();
    expect(queue.shift()).toEqual({ item: 'a1', principal: 'a' });
  });

  it('keeps no item alive once it was taken or deleted, while its lane goes on', async () => {
    const queue = new FairQueue<object>();
    const gone = new FinalizationRegistry<number>((index) => collected.add(index));
    const collected = new Set<number>();
    // One busy lane: items pushed and taken one after another, the lane never empty, as under load.
    queue.push('busy', {});
    for (let i = 0; i < 500; i++) {
      const item = { payload: new Array(100).fill(i) };
      gone.register(item, i);
      queue.push('busy', item);
      if (i % 10 === 0) queue.delete(item);
      else queue.shift();
    }
    for (let round = 0; round < 20 && collected.size < 499; round++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // All but the one still queued are collectable.
    expect(collected.size).toBeGreaterThanOrEqual(499);
  });
});
