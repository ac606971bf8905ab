import { describe, expect, it } from 'vitest';
import { ServerEventSchema } from './events.ts';
import { ProcessSnapshotSchema, RunSnapshotSchema } from './snapshot.ts';

const snapshot = {
  pid: 3,
  state: 'idle',
  status: 'failed',
  ref: 'msg-1',
  lang: 'ts',
  createdAt: '2026-11-21T21:48:28.123Z',
  run: 2,
  runs: 2,
  timeoutMs: 30000,
  memoryLimitMb: 128,
  error: { name: 'TypeError', message: 'x is not a function', line: 3, column: 5 },
  metadata: { streamId: 's', intentIndex: 0, attributes: { exec: true, timeout: '5000' } },
  queuedAt: '2026-11-21T21:48:28.200Z',
  startedAt: '2026-11-21T21:48:28.201Z',
  endedAt: '2026-11-21T21:48:28.300Z',
  durationMs: 99.5,
};

describe('protocol schemas', () => {
  it('accepts every server event type with its fields at the top level', () => {
    const events = [
      { type: 'process', seq: 1, ...snapshot },
      { type: 'output', seq: 2, pid: 3, run: 2, value: { any: ['json', 1] } },
      { type: 'log', seq: 3, pid: 3, run: 2, stream: 'stderr', text: 'warn\n' },
      { type: 'tool', seq: 4, pid: 3, run: 2, name: 'get_weather', durationMs: 12, isError: false },
      { type: 'intent', seq: 5, streamId: 's', index: 0, pid: 3, lang: 'ts', attributes: { exec: true } },
      {
        type: 'intent',
        seq: 6,
        streamId: 's',
        index: 1,
        lang: 'python',
        attributes: {},
        rejected: 'unsupported',
      },
      {
        type: 'stream.result',
        seq: 7,
        streamId: 's',
        ref: 'msg-1',
        processes: [snapshot],
        text: 'block 0 ...',
      },
    ];
    for (const event of events) expect(ServerEventSchema.parse(event)).toEqual(event);
  });

  it('rejects malformed events and snapshots, naming the bad field', () => {
    const bad = [
      [{ type: 'output', seq: 0, pid: 3, run: 1, value: 1 }, 'seq'],
      [{ type: 'log', seq: 1, pid: 3, run: 1, stream: 'stdin', text: '' }, 'stream'],
      [{ type: 'process', seq: 1, ...snapshot, state: 'done' }, 'state'],
      [{ type: 'process', seq: 1, ...snapshot, createdAt: 'yesterday' }, 'createdAt'],
      [{ type: 'nope', seq: 1 }, 'type'],
    ] as const;
    for (const [event, path] of bad) {
      const parsed = ServerEventSchema.safeParse(event);
      expect(parsed.success, JSON.stringify(event)).toBe(false);
      expect(parsed.error?.issues[0]?.path).toContain(path);
    }
    expect(ProcessSnapshotSchema.safeParse({ ...snapshot, run: -1 }).success).toBe(false);
    expect(ProcessSnapshotSchema.safeParse({ ...snapshot, status: null, error: undefined }).success).toBe(
      true,
    );
    const queuedRun = { state: 'queued', status: null, outputs: [], stdout: '', stderr: '' };
    expect(RunSnapshotSchema.safeParse({ ...queuedRun, run: 1 }).success).toBe(true);
    expect(RunSnapshotSchema.safeParse({ ...queuedRun, run: 0 }).success).toBe(false);
  });
});
