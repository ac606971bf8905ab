import type { ServerEvent } from '@mci/protocol';
import { expect, test } from 'vitest';
import { eventMatches } from './event-target.ts';

const base = {
  status: null,
  lang: 'ts',
  createdAt: '2026-11-21T22:00:00.000Z',
  run: 1,
  runs: 1,
  timeoutMs: 1000,
  memoryLimitMb: 64,
};

test('routes pid, ref, stream and all targets by the fields each event carries', () => {
  const events: ServerEvent[] = [
    {
      type: 'intent',
      seq: 1,
      streamId: 's1',
      ref: 'r1',
      index: 0,
      lang: 'python',
      attributes: {},
      rejected: 'no',
    },
    {
      type: 'process',
      seq: 2,
      pid: 7,
      state: 'queued',
      ref: 'r1',
      metadata: { streamId: 's1', intentIndex: 1 },
      ...base,
    },
    { type: 'intent', seq: 3, streamId: 's1', ref: 'r1', index: 1, pid: 7, lang: 'ts', attributes: {} },
    { type: 'output', seq: 4, pid: 7, run: 1, ref: 'r1', streamId: 's1', value: 1 },
    { type: 'output', seq: 5, pid: 8, run: 1, value: 2 },
    { type: 'log', seq: 6, pid: 9, run: 1, ref: 'r2', stream: 'stdout', text: 'x' },
    { type: 'stream.result', seq: 7, streamId: 's1', ref: 'r1', processes: [], text: '' },
  ];
  const seen = (target: Parameters<typeof eventMatches>[0]) =>
    events.filter((event) => eventMatches(target, event)).map((event) => event.seq);
  expect(seen({ pid: 7 })).toEqual([2, 3, 4]);
  expect(seen({ ref: 'r1' })).toEqual([1, 2, 3, 4, 7]);
  expect(seen({ ref: 'r2' })).toEqual([6]);
  expect(seen({ streamId: 's1' })).toEqual([1, 2, 3, 4, 7]);
  expect(seen({ all: true })).toHaveLength(events.length);
  expect(seen({ streamId: 'other' })).toEqual([]);
});
