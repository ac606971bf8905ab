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
        const owner = new Map<number, string>([[-1, 'blocker']]);
        for (const [i, item] of items.entries()) owner.set(i, item.principal);
        scheduler.enqueue('blocker', -1); // takes the only slot, so everything below queues first
        for (const [i, item] of items.entries()) scheduler.enqueue(item.principal, i);
        items.forEach((item, i) => {
          if (item.removed) expect(scheduler.remove(i)).toBe(true);
        });
        const kept = items.flatMap((item, i) => (item.removed ? [] : [{ principal: item.principal, i }]));
        expect(scheduler.waiting).toBe(kept.length);
        for (let n = 0; n <= kept.length; n++) scheduler.finished(owner.get(started.at(-1)!)!);

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

  it('gives one principal at most its maxRunning slots; its other items wait while others run', () => {
    const started: string[] = [];
    const scheduler = new Scheduler<string>(
      2,
      (item) => started.push(item),
      () => 1,
    );
    for (const item of ['a1', 'a2', 'a3']) scheduler.enqueue('a', item);
    // One slot is left free for another principal.
    expect(started).toEqual(['a1']);
    scheduler.enqueue('b', 'b1');
    expect(started).toEqual(['a1', 'b1']);
    scheduler.finished('a');
    expect(started).toEqual(['a1', 'b1', 'a2']);
    scheduler.finished('b');
    scheduler.finished('a');
    expect(started).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('a principal at its maxRunning leaves the free slots to others, whatever each one may run', () => {
    const started: string[] = [];
    const limits: Record<string, number> = { a: 1, b: 3 };
    const scheduler = new Scheduler<string>(
      4,
      (item) => started.push(item),
      (p) => limits[p] ?? 4,
    );
    for (let i = 0; i < 20; i++) scheduler.enqueue('a', `a${i}`);
    for (let i = 0; i < 5; i++) scheduler.enqueue('b', `b${i}`);
    expect(started).toEqual(['a0', 'b0', 'b1', 'b2']);
    scheduler.enqueue('c', 'c0');
    expect(started).toEqual(['a0', 'b0', 'b1', 'b2']);
    // A free slot goes to the next principal in turn under its limit; a, at its limit, is passed over.
    scheduler.finished('b');
    expect(started.at(-1)).toBe('b3');
    scheduler.finished('b');
    expect(started.at(-1)).toBe('c0');
    scheduler.finished('a');
    expect(started.at(-1)).toBe('a1');
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
          if (started.length > 0) scheduler.finished(owners[started[0]!]!);
          expect(started).toHaveLength(Math.min(concurrency, owners.length));
          expect(scheduler.waiting).toBe(owners.length - started.length);
        },
      ),
    );
  });
});
