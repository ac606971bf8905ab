import type { ServerEvent } from '@mci/protocol';
import { expect, test } from 'vitest';
import { RouteBook } from './route-book.ts';

const base = {
  status: null,
  lang: 'ts',
  createdAt: '2026-11-21T22:00:00.000Z',
  run: 1,
  runs: 1,
  timeoutMs: 1000,
  memoryLimitMb: 64,
};

test('matches pid, ref, stream and all targets the way the server routes events', () => {
  const book = new RouteBook();
  const events: ServerEvent[] = [
    { type: 'intent', seq: 1, streamId: 's1', index: 0, lang: 'python', attributes: {}, rejected: 'no' },
    {
      type: 'process',
      seq: 2,
      pid: 7,
      state: 'queued',
      ref: 'r1',
      metadata: { streamId: 's1', intentIndex: 1 },
      ...base,
    },
    { type: 'intent', seq: 3, streamId: 's1', index: 1, pid: 7, lang: 'ts', attributes: {} },
    { type: 'output', seq: 4, pid: 7, run: 1, value: 1 },
    { type: 'output', seq: 5, pid: 8, run: 1, value: 2 },
    { type: 'stream.result', seq: 6, streamId: 's1', ref: 'r1', processes: [], text: '' },
  ];
  const seen = (target: Parameters<RouteBook['matches']>[0]) =>
    events.filter((event) => {
      book.learn(event);
      return book.matches(target, event);
    });
  expect(seen({ pid: 7 }).map((e) => e.seq)).toEqual([2, 3, 4]);
  const fresh = new RouteBook();
  fresh.noteStream('s1', 'r1'); // a stream this client opened: its rejected intents match the ref too
  expect(
    events
      .filter((event) => {
        fresh.learn(event);
        return fresh.matches({ ref: 'r1' }, event);
      })
      .map((e) => e.seq),
  ).toEqual([1, 2, 3, 4, 6]);
  expect(seen({ streamId: 's1' }).map((e) => e.seq)).toEqual([1, 2, 3, 4, 6]);
  expect(seen({ all: true })).toHaveLength(events.length);
  expect(seen({ streamId: 'other' })).toEqual([]);
});
