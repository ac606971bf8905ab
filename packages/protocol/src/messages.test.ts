import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServerMessageSchema } from './messages.ts';
import { parseClientMessage } from './parse-client-message.ts';

const parse = (value: unknown) =>
  parseClientMessage(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseClientMessage', () => {
  it('accepts every request type', () => {
    const good = [
      { type: 'process.create', id: 1, code: 'output(1)', ref: ' chat-1 ', timeoutMs: null, autorun: false },
      { type: 'process.signal', id: 'a', pid: 3, signal: 'run', force: true },
      { type: 'process.get', pid: 3 },
      { type: 'process.list', state: 'idle', status: 'failed', ref: 'x' },
      { type: 'subscribe', all: true, since: 0 },
      { type: 'subscribe', pid: 2 },
      { type: 'subscribe', streamId: 's1', since: 4 },
      { type: 'unsubscribe', ref: 'chat-1' },
      { type: 'stream.start', streamId: 's1', ref: 'm1' },
      { type: 'stream.chunk', streamId: 's1', text: '```ts exec' },
      { type: 'stream.end', streamId: 's1' },
    ];
    for (const message of good) expect(parse(message), JSON.stringify(message)).toMatchObject({ ok: true });
    const created = parse(good[0]);
    expect(created.ok && created.message.type === 'process.create' && created.message.ref).toBe('chat-1');
  });

  it('reports malformed JSON, non-objects and unknown types', () => {
    expect(parse('{"type":')).toMatchObject({ ok: false, problem: { code: 'BAD_JSON' } });
    expect(parse('[1,2]')).toMatchObject({ ok: false, problem: { code: 'VALIDATION' } });
    expect(parse('null')).toMatchObject({ ok: false, problem: { code: 'VALIDATION' } });
    expect(parse({ id: 7 })).toMatchObject({
      ok: false,
      problem: { code: 'VALIDATION', path: 'type', id: 7 },
    });
    expect(parse({ type: 'process.explode', id: 'x' })).toMatchObject({
      ok: false,
      problem: { code: 'UNKNOWN_TYPE', id: 'x', path: 'type' },
    });
  });

  it('names the bad field and echoes the id', () => {
    const cases: Array<[unknown, string]> = [
      [{ type: 'process.signal', id: 4, pid: 1, signal: 'stop' }, 'signal'],
      [{ type: 'process.signal', id: 4, pid: -1, signal: 'kill' }, 'pid'],
      [{ type: 'process.get', id: 4, pid: '1' }, 'pid'],
      [{ type: 'process.create', id: 4 }, 'code'],
      [{ type: 'process.create', id: 4, code: 'x', timeoutMs: 0 }, 'timeoutMs'],
      [{ type: 'process.create', id: 4, code: 'x', timeoutMs: '5' }, 'timeoutMs'],
      [{ type: 'process.create', id: 4, code: 'x', ref: '   ' }, 'ref'],
      [{ type: 'process.create', id: 4, code: 'x', ref: 'r'.repeat(257) }, 'ref'],
      [{ type: 'process.create', id: 4, code: 'x', colour: 'red' }, 'colour'],
      [{ type: 'subscribe', id: 4, pid: 1, all: true }, 'pid'],
      [{ type: 'subscribe', id: 4 }, 'pid'],
      [{ type: 'subscribe', id: 4, all: true, since: -1 }, 'since'],
      [{ type: 'stream.chunk', id: 4, streamId: 's' }, 'text'],
      [{ type: 'stream.start', id: 4, streamId: '' }, 'streamId'],
    ];
    for (const [message, path] of cases) {
      const result = parse(message);
      expect(result, JSON.stringify(message)).toMatchObject({
        ok: false,
        problem: { code: 'VALIDATION', path, id: 4 },
      });
      expect(!result.ok && result.problem.message).toContain(path);
    }
  });

  it('never throws, whatever the frame (text, JSON values, near-miss requests)', () => {
    const nearMiss = fc.record(
      {
        type: fc.constantFrom('process.create', 'process.signal', 'subscribe', 'stream.chunk', 'nope'),
        id: fc.oneof(fc.string(), fc.integer(), fc.object()),
        pid: fc.oneof(fc.integer(), fc.string(), fc.double()),
        code: fc.oneof(fc.string(), fc.integer()),
        signal: fc.string(),
        since: fc.oneof(fc.integer(), fc.constant(null)),
        all: fc.anything(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          nearMiss.map((value) => JSON.stringify(value)),
        ),
        (frame) => {
          const result = parseClientMessage(frame);
          if (!result.ok) expect(['BAD_JSON', 'UNKNOWN_TYPE', 'VALIDATION']).toContain(result.problem.code);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('drops an unreadable id rather than echoing it', () => {
    const result = parse({ type: 'nope', id: { evil: true } });
    expect(result.ok === false && 'id' in result.problem).toBe(false);
  });
});

describe('ServerMessageSchema', () => {
  it('reads replies, errors, notices and events', () => {
    const snapshot = {
      pid: 1,
      state: 'queued',
      status: null,
      lang: 'ts',
      createdAt: '2026-11-21T21:48:28.123Z',
      run: 1,
      runs: 1,
      timeoutMs: 30000,
      memoryLimitMb: 128,
    };
    const messages = [
      { type: 'reply', id: 1, request: 'process.create', result: { process: snapshot } },
      { type: 'reply', request: 'subscribe', result: { subscription: { all: true }, replayed: 0, seq: 9 } },
      {
        type: 'error',
        id: 1,
        error: 'no process 9',
        code: 'NOT_FOUND',
        message: 'no process 9',
        path: 'pid',
      },
      { type: 'overflow', since: 12, subscriptions: [{ pid: 1 }] },
      {
        type: 'hello',
        principal: { id: 'local', role: 'operator' },
        seq: 0,
        limits: { maxFrameBytes: 1, maxCodeBytes: 1 },
      },
      { type: 'process', seq: 3, ...snapshot },
      { type: 'output', seq: 4, pid: 1, run: 1, value: 2 },
    ];
    for (const message of messages)
      expect(ServerMessageSchema.safeParse(message).success, message.type).toBe(true);
    expect(ServerMessageSchema.safeParse({ type: 'reply', request: 'process.get', result: {} }).success).toBe(
      false,
    );
  });
});

describe('describeIssues', () => {
  it('writes paths as tools[2].name and refuses an empty program', () => {
    const result = parseClientMessage(
      JSON.stringify({ type: 'process.create', id: 1, code: 'x', metadata: { attributes: { 'a b': [1] } } }),
    );
    expect(!result.ok && result.problem.path).toBe('metadata.attributes["a b"]');
    const empty = parseClientMessage(JSON.stringify({ type: 'process.create', code: ' \n' }));
    expect(!empty.ok && empty.problem).toMatchObject({ code: 'VALIDATION', path: 'code' });
  });
});
