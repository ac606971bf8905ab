import { formatResults, type ServerEvent } from '@mci/protocol';
import { describe, expect, it } from 'vitest';
import { ManualPool } from '../../test/support/manual-pool.ts';
import { createProcessManager } from './process-manager.ts';
import type { Principal } from './process-manager-types.ts';
import type { EventRoute } from './process-store.ts';
import { ServerError } from './server-error.ts';

// Streams over the real intent extractor and a pool the test drives (scheduling order is exact).

const alice: Principal = { id: 'alice', role: 'client' };
const bob: Principal = { id: 'bob', role: 'client' };

const fence = (info: string, code: string) => `\`\`\`${info}\n${code}\n\`\`\`\n`;
const turn = [
  'Let me compute this.\n\n',
  fence('ts exec=true', 'output(1 + 1)'),
  'Ordinary code, not run:\n',
  fence('ts', 'output("never")'),
  fence('python exec', 'print(1)'),
  fence('js exec=true timeout=5000 title="second"', 'console.log("two")'),
  fence('ts exec timeout=soon', 'output(3)'),
  fence('typescript exec', 'output(4)'),
  '```ts exec=true\noutput("cut off"',
].join('');

async function setup(size = 2) {
  const pool = new ManualPool(size);
  const manager = await createProcessManager({ pool });
  const events: Array<{ event: ServerEvent; route: EventRoute }> = [];
  manager.onEvent((event, route) => events.push({ event, route }));
  return { pool, manager, events };
}

function chunks(text: string, seed: number): string[] {
  const out: string[] = [];
  let state = seed;
  for (let i = 0; i < text.length; ) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const size = 1 + (state % 17);
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out;
}

describe('streams', () => {
  it('turns closed ts/js exec intents into processes run in order, rejects the rest, then sends stream.result', async () => {
    for (const seed of [1, 2, 3]) {
      const { pool, manager, events } = await setup(4);
      const stream = manager.openStream({ streamId: `turn-${seed}`, ref: ' msg-1 ' }, alice);
      for (const chunk of chunks(turn, seed)) stream.push(chunk);
      // Only the first block runs, though the pool has room: the stream's blocks run one after another.
      expect(pool.executions.map((e) => e.request.code)).toEqual(['output(1 + 1)']);
      stream.end();
      expect(stream.ended).toBe(true);
      const first = await pool.started(1);
      first.emit({ type: 'output', value: 2 });
      first.finish();
      const second = await pool.started(2);
      expect(second.request).toMatchObject({ code: 'console.log("two")', lang: 'js', timeoutMs: 5000 });
      second.emit({ type: 'log', stream: 'stdout', text: 'two\n' });
      second.finish();
      (await pool.started(3)).finish({ status: 'failed', error: { name: 'Error', message: 'bad', line: 1 } });
      const result = await stream.result;
      expect(pool.executions).toHaveLength(3);

      const intents = events.flatMap(({ event }) => (event.type === 'intent' ? [event] : []));
      expect(intents.map(({ index, lang, pid, rejected }) => ({ index, lang, pid, rejected }))).toEqual([
        { index: 0, lang: 'ts', pid: 1, rejected: undefined },
        {
          index: 1,
          lang: 'python',
          pid: undefined,
          rejected: 'language "python" is not supported (use ts, typescript, js, javascript)',
        },
        { index: 2, lang: 'js', pid: 2, rejected: undefined },
        {
          index: 3,
          lang: 'ts',
          pid: undefined,
          rejected: 'timeout attribute must be a positive integer (ms), got "soon"',
        },
        { index: 4, lang: 'typescript', pid: 3, rejected: undefined },
        {
          index: 5,
          lang: 'ts',
          pid: undefined,
          rejected: 'unclosed block: the stream ended inside it, so it was not run',
        },
      ]);
      expect(intents[2]!.attributes).toEqual({ exec: true, timeout: '5000', title: 'second' });
      expect(await manager.get(2, alice)).toMatchObject({
        ref: 'msg-1',
        metadata: {
          streamId: `turn-${seed}`,
          intentIndex: 2,
          attributes: { exec: true, timeout: '5000', title: 'second' },
        },
      });

      expect(result.processes.map((p) => [p.pid, p.status])).toEqual([
        [1, 'success'],
        [2, 'success'],
        [3, 'failed'],
      ]);
      expect(result.ref).toBe('msg-1');
      const rejected = intents.flatMap((i) =>
        i.rejected ? [{ index: i.index, lang: i.lang, reason: i.rejected }] : [],
      );
      const expectedText = formatResults(
        await Promise.all([1, 2, 3].map((pid) => manager.getResult(pid, alice))),
        { rejected },
      );
      expect(result.text).toBe(expectedText);
      expect(result.text).toContain('block 0 (pid 1): success\noutput: 2');
      expect(result.text).toContain('block 2 (pid 2): success\nstdout:\n| two');
      expect(result.text).toContain('block 4 (pid 3): failed\nerror (line 1): Error: bad');

      const last = events.at(-1)!;
      expect(last.event).toMatchObject({
        type: 'stream.result',
        streamId: `turn-${seed}`,
        text: expectedText,
      });
      expect(last.route).toEqual({ owner: 'alice', ref: 'msg-1', streamId: `turn-${seed}` });
      expect(events.filter(({ event }) => event.type === 'stream.result')).toHaveLength(1);
    }
  });

  it('runs different streams and direct submissions concurrently', async () => {
    const { pool, manager } = await setup(3);
    const a = manager.openStream({ streamId: 'a' }, alice);
    const b = manager.openStream({ streamId: 'b' }, bob);
    a.push(fence('ts exec', 'a1') + fence('ts exec', 'a2'));
    b.push(fence('ts exec', 'b1'));
    await manager.create({ code: 'direct' }, alice);
    expect(pool.executions.map((e) => e.request.code)).toEqual(['a1', 'b1', 'direct']);
    a.end();
    b.end();
    pool.executions[1]!.finish();
    expect((await b.result).processes).toHaveLength(1);
    pool.executions[0]!.finish();
    (await pool.started(4)).finish();
    expect(pool.executions[3]!.request.code).toBe('a2');
    expect((await a.result).processes.map((p) => p.status)).toEqual(['success', 'success']);
  });

  it('skips a waiting block that was killed, and a kill of the running block lets the next one run', async () => {
    const { pool, manager } = await setup(2);
    const stream = manager.openStream({ streamId: 's' }, alice);
    stream.push(fence('ts exec', 'one') + fence('ts exec', 'two') + fence('ts exec', 'three'));
    stream.end();
    expect((await manager.get(2, alice)).state).toBe('queued');
    expect(await manager.signal(2, 'kill', alice)).toMatchObject({ state: 'idle', status: 'canceled' });
    await pool.started(1);
    await manager.signal(1, 'kill', alice);
    const third = await pool.started(2);
    expect(third.request.code).toBe('three');
    third.finish();
    const result = await stream.result;
    expect(result.processes.map((p) => p.status)).toEqual(['canceled', 'canceled', 'success']);
    expect(result.text).toContain('block 1 (pid 2): canceled');
  });

  it('ends at once when nothing runs, and refuses reuse, late pushes and strangers', async () => {
    const { manager } = await setup();
    const stream = manager.openStream({ streamId: 'empty' }, alice);
    stream.push('just prose, ');
    stream.push('no code\n');
    stream.end();
    stream.end();
    expect(await stream.result).toEqual({
      streamId: 'empty',
      processes: [],
      text: 'no exec blocks were run',
    });
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return error instanceof ServerError ? `${error.code}:${error.path}` : String(error);
      }
      return 'no error';
    };
    expect(codeOf(() => stream.push('more'))).toBe('CONFLICT:streamId');
    expect(codeOf(() => manager.openStream({ streamId: 'empty' }, alice))).toBe('CONFLICT:streamId');
    expect(codeOf(() => manager.openStream({ streamId: '' }, alice))).toBe('VALIDATION:streamId');
    expect(codeOf(() => manager.openStream({ streamId: 'x', ref: '' }, alice))).toBe('VALIDATION:ref');
    expect(manager.getStream('empty', alice)).toBe(stream);
    expect(codeOf(() => manager.getStream('empty', bob))).toBe('NOT_FOUND:streamId');
    expect(manager.getStream('empty', { id: 'root', role: 'operator' })).toBe(stream);
  });

  it('rejects intents the server cannot take (queue full, shutting down) instead of failing the push', async () => {
    const pool = new ManualPool(1);
    const manager = await createProcessManager({ pool, maxQueue: 1 });
    const events: ServerEvent[] = [];
    manager.onEvent((event) => events.push(event));
    await manager.create({ code: 'busy' }, bob);
    await manager.create({ code: 'queued' }, bob);
    const stream = manager.openStream({ streamId: 's' }, alice);
    stream.push(fence('ts exec', 'x'));
    stream.end();
    const result = await stream.result;
    expect(result.processes).toEqual([]);
    expect(result.text).toMatch(/^block 0 \(ts\): not run: the queue is full/);
    expect(events.find((e) => e.type === 'intent')).toMatchObject({
      rejected: expect.stringContaining('queue is full'),
    });
  });

  it('ends open streams at shutdown: blocks not yet run are rejected, the result is still sent', async () => {
    const { pool, manager } = await setup(1);
    const stream = manager.openStream({ streamId: 's' }, alice);
    stream.push(fence('ts exec', 'one'));
    stream.push('```ts exec\noutput(2)\n```');
    const running = await pool.started(1);
    const closing = manager.shutdown({ graceMs: 60_000 });
    expect(stream.ended).toBe(true);
    running.finish();
    await closing;
    const result = await stream.result;
    expect(result.processes.map((p) => p.status)).toEqual(['success']);
    expect(result.text).toContain('block 1 (ts): not run: the server is shutting down');
    expect(pool.executions).toHaveLength(1);
  });
});
