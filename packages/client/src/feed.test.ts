import type { ServerEvent } from '@mci/protocol';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Feed } from './feed.ts';

const output = (seq: number): ServerEvent => ({ type: 'output', seq, pid: 1, run: 1, value: seq });
const owner = { release: () => {} };

describe('Feed', () => {
  test('delivers exactly the events after since, in order, whatever the arrival order around the reply', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }), // since
        fc.integer({ min: 0, max: 30 }), // the server's seq when it handles the subscribe
        fc.integer({ min: 0, max: 20 }), // live events after it
        fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 20 }), // live events the connection had before (other subscriptions)
        fc.integer({ min: 0, max: 20 }), // live events read before the reply's handler ran
        fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 20 }), // repeats from overlapping replays, later
        (since, point, after, before, early, repeats) => {
          fc.pre(since <= point);
          const delivered: number[] = [];
          const feed = new Feed(
            owner,
            { pid: 1 },
            { since, onEvent: (event) => delivered.push(event.seq) },
            since,
          );
          feed.beginSubscribe();
          for (const seq of before.filter((s) => s <= point).sort((a, b) => a - b)) feed.accept(output(seq));
          for (let seq = since + 1; seq <= point; seq++) feed.accept(output(seq)); // the replay
          const live = Array.from({ length: after }, (_, i) => point + 1 + i);
          for (const seq of live.slice(0, early)) feed.accept(output(seq));
          feed.confirmed(point);
          for (const seq of live.slice(early)) feed.accept(output(seq));
          for (const seq of repeats.filter((s) => s <= point + after)) feed.accept(output(seq));
          const expected = Array.from({ length: point + after - since }, (_, i) => since + 1 + i);
          expect(delivered).toEqual(expected);
          expect(feed.lastSeq).toBe(point + after);
        },
      ),
    );
  });

  test('without since, only events after the subscription point', () => {
    const delivered: number[] = [];
    const feed = new Feed(owner, { all: true }, { onEvent: (event) => delivered.push(event.seq) }, undefined);
    feed.beginSubscribe();
    feed.accept(output(3));
    feed.accept(output(6)); // live, read before the reply's handler ran
    feed.confirmed(5);
    feed.accept(output(7));
    feed.accept(output(4)); // an overlapping replay
    expect(delivered).toEqual([6, 7]);
  });

  test('after a reconnect it resubscribes from the last seq it delivered', () => {
    const delivered: number[] = [];
    const feed = new Feed(owner, { pid: 1 }, { onEvent: (event) => delivered.push(event.seq) }, 0);
    expect(feed.beginSubscribe()).toBe(0);
    feed.confirmed(2);
    feed.accept(output(3));
    feed.accept(output(4));
    expect(feed.beginSubscribe()).toBe(4); // the connection dropped after 4
    for (const seq of [5, 6]) feed.accept(output(seq)); // replayed
    feed.confirmed(6);
    feed.accept(output(7));
    expect(delivered).toEqual([3, 4, 5, 6, 7]);
  });

  test('until ends the iteration after the matching event; close releases the feed once', async () => {
    let released = 0;
    const feed = new Feed(
      { release: () => released++ },
      { pid: 1 },
      { until: (event) => event.seq === 2 },
      0,
    );
    feed.confirmedImplicitly();
    for (const seq of [1, 2, 3]) feed.accept(output(seq));
    const seen: number[] = [];
    for await (const event of feed) seen.push(event.seq);
    expect(seen).toEqual([1, 2]);
    feed.close();
    expect(released).toBe(1);
  });

  test('a failure ends the iteration with the error, after what was already queued', async () => {
    const feed = new Feed(owner, { pid: 1 }, {}, 0);
    feed.confirmedImplicitly();
    feed.accept(output(1));
    const error = Object.assign(new Error('gone'), { code: 'DISCONNECTED' });
    feed.fail(error as never);
    const iterator = feed[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ value: output(1), done: false });
    await expect(iterator.next()).rejects.toBe(error);
  });
});
