import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Scheduler } from './scheduler.ts';

const principals = fc.constantFrom('a', 'b', 'c', 'd');

describe('Scheduler', () => {
  it('drains FIFO per principal, round-robin across principals, skipping removed items (property)', () => {
    const submissions = fc.array(fc.record({ principal: principals, removed: fc.boolean() }), {
      maxLength: 60,
    });
    fc.assert(
      fc.property(submissions, (items) => {
        const started: number[] = [];
        const scheduler = new Scheduler<number>(1, (item) => started.push(item));
        scheduler.enqueue('blocker', -1); // takes the only slot, so everything below queues first
        for (const [i, item] of items.entries()) scheduler.enqueue(item.principal, i);
        items.forEach((item, i) => {
          if (item.removed) expect(scheduler.remove(i)).toBe(true);
        });
        const kept = items.flatMap((item, i) => (item.removed ? [] : [{ principal: item.principal, i }]));
        expect(scheduler.waiting).toBe(kept.length);
        for (let n = 0; n <= kept.length; n++) scheduler.finished();

        const lanes = new Map<string, number[]>();
        for (const { principal, i } of kept) lanes.set(principal, [...(lanes.get(principal) ?? []), i]);
        const ring = [...new Set(items.map((item) => item.principal))].filter((p) => lanes.has(p));
        const expected = [-1];
        while (ring.length > 0) {
          const principal = ring.shift()!;
          const lane = lanes.get(principal)!;
          expected.push(lane.shift()!);
          if (lane.length > 0) ring.push(principal);
        }
        expect(started).toEqual(expected);
        expect(scheduler.waiting).toBe(0);
      }),
    );
  });

  it('never runs more than `concurrency` at once, and starts nothing once paused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(principals, { maxLength: 30 }),
        (concurrency, owners) => {
          const started: number[] = [];
          const scheduler = new Scheduler<number>(concurrency, (item) => started.push(item));
          for (const [i, owner] of owners.entries()) scheduler.enqueue(owner, i);
          expect(started).toHaveLength(Math.min(concurrency, owners.length));
          scheduler.pause();
          scheduler.finished();
          expect(started).toHaveLength(Math.min(concurrency, owners.length));
          expect(scheduler.waiting).toBe(owners.length - started.length);
        },
      ),
    );
  });
});
