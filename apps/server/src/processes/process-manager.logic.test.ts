import type { ServerEvent } from '@mci/protocol';
import { ServerEventSchema } from '@mci/protocol';
import { describe, expect, it } from 'vitest';
import { ManualPool } from '../../test/support/manual-pool.ts';
import { createProcessManager } from './process-manager.ts';
import type { Principal, ProcessManagerOptions } from './process-manager-types.ts';
import type { EventRoute } from './process-store.ts';
import { EVENTS_PER_TURN } from './run-output.ts';
import { ServerError } from './server-error.ts';

// Fast, deterministic tests of the scheduling logic over an in-memory pool the test drives.
// The same behaviours run through the real sandbox in process-manager.test.ts.

const alice: Principal = { id: 'alice', role: 'client' };
const bob: Principal = { id: 'bob', role: 'client' };
const root: Principal = { id: 'root', role: 'operator' };

async function setup(options: Partial<ProcessManagerOptions> & { size?: number } = {}) {
  const pool = new ManualPool(options.size ?? 1);
  const manager = await createProcessManager({ pool, ...options });
  const events: Array<{ event: ServerEvent; route: EventRoute }> = [];
  manager.onEvent((event, route) => events.push({ event, route }));
  return { pool, manager, events };
}

async function rejected(promise: Promise<unknown>): Promise<ServerError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServerError) return error;
    throw error;
  }
  throw new Error('expected a ServerError');
}

describe('process manager: states and signals', () => {
  it('creates queued, runs, and ends idle/success with outputs and logs recorded per run', async () => {
    const { pool, manager, events } = await setup();
    const created = await manager.create({ code: 'output(1 + 1)', ref: '  msg-1  ' }, alice);
    expect(created).toMatchObject({
      pid: 1,
      ref: 'msg-1',
      lang: 'ts',
      run: 1,
      runs: 1,
      timeoutMs: 30000,
      memoryLimitMb: 128,
    });
    const execution = await pool.started(1);
    expect(execution.request).toMatchObject({
      code: 'output(1 + 1)',
      lang: 'ts',
      timeoutMs: 30000,
      memoryLimitMb: 128,
    });
    execution.emit({ type: 'output', value: 2 });
    execution.emit({ type: 'log', stream: 'stdout', text: 'hi\n' });
    execution.finish();
    const done = await manager.wait(1, alice);
    expect(done).toMatchObject({ state: 'idle', status: 'success', run: 1 });
    expect(done.startedAt! >= done.queuedAt!).toBe(true);
    expect(done.endedAt! >= done.startedAt!).toBe(true);
    expect(await manager.getRun(1, 1, alice)).toMatchObject({
      outputs: [2],
      stdout: 'hi\n',
      stderr: '',
      status: 'success',
    });
    const types = events.map(({ event }) =>
      event.type === 'process' ? `process:${event.state}` : event.type,
    );
    expect(types).toEqual(['process:queued', 'process:running', 'output', 'log', 'process:idle']);
    const seqs = events.map(({ event }) => event.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    for (const { event } of events) expect(ServerEventSchema.parse(event)).toEqual(event);
  });

  it('keeps every run readable; run after success, failure, timeout and cancel', async () => {
    const { pool, manager } = await setup();
    await manager.create({ code: 'x' }, alice);
    const outcomes = [
      { status: 'success' as const, outputs: ['a'] },
      {
        status: 'failed' as const,
        error: { name: 'TypeError', message: 'boom', line: 3, column: 5, stack: 'host stack' },
      },
      { status: 'timeout' as const },
    ];
    for (const [i, outcome] of outcomes.entries()) {
      (await pool.started(i + 1)).finish(outcome);
      expect(await manager.wait(1, alice)).toMatchObject({
        state: 'idle',
        status: outcome.status,
        run: i + 1,
      });
      await manager.signal(1, 'run', alice, { force: true });
    }
    await pool.started(4);
    expect((await manager.signal(1, 'kill', alice)).state).toBe('terminating');
    expect(await manager.wait(1, alice)).toMatchObject({ status: 'canceled', run: 4, runs: 4 });
    await manager.signal(1, 'run', alice);
    (await pool.started(5)).finish();
    expect(await manager.wait(1, alice)).toMatchObject({ status: 'success', run: 5 });
    expect((await manager.getRun(1, 1, alice)).outputs).toEqual(['a']);
    expect((await manager.getRun(1, 2, alice)).error).toEqual({
      name: 'TypeError',
      message: 'boom',
      line: 3,
      column: 5,
    });
    expect((await manager.getRun(1, 3, alice)).status).toBe('timeout');
    expect((await manager.getRun(1, 4, alice)).status).toBe('canceled');
    expect((await manager.get(1, alice)).error).toBeUndefined();
    expect((await rejected(manager.getRun(1, 6, alice))).code).toBe('NOT_FOUND');
  });

  it('applies the 409 rules of run and kill', async () => {
    const { pool, manager } = await setup();
    await manager.create({ code: 'a' }, alice);
    await manager.create({ code: 'b' }, alice);
    await pool.started(1);
    // running: run -> 409; queued: run -> 409
    expect((await rejected(manager.signal(1, 'run', alice))).status).toBe(409);
    expect((await rejected(manager.signal(2, 'run', alice))).code).toBe('CONFLICT');
    // queued -> idle/canceled at once, never started
    const killed = await manager.signal(2, 'kill', alice);
    expect(killed).toMatchObject({ state: 'idle', status: 'canceled' });
    expect(killed.startedAt).toBeUndefined();
    // running -> terminating; terminating -> no change (sent together: the manual pool confirms a kill
    // on the next microtask)
    const kills = await Promise.all([manager.signal(1, 'kill', alice), manager.signal(1, 'kill', alice)]);
    expect(kills.map((snapshot) => snapshot.state)).toEqual(['terminating', 'terminating']);
    await manager.wait(1, alice);
    // idle -> 409 (nothing to kill)
    expect((await rejected(manager.signal(1, 'kill', alice))).code).toBe('CONFLICT');
    expect(pool.executions).toHaveLength(1);
    expect(pool.executions[0]!.killed).toBe(true);
  });

  it('two run signals sent at once to an idle process run it once: the other gets CONFLICT', async () => {
    const { pool, manager } = await setup();
    await manager.create({ code: 'x', autorun: false }, alice);
    const outcomes = await Promise.allSettled([
      manager.signal(1, 'run', alice),
      manager.signal(1, 'run', alice),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refused?.reason).toMatchObject({ code: 'CONFLICT' });
    (await pool.started(1)).finish();
    expect(await manager.wait(1, alice)).toMatchObject({ state: 'idle', status: 'success', runs: 1 });
    expect(pool.executions).toHaveLength(1);
  });

  it('a delete sent with a run signal to an idle process: the first wins, the second gets CONFLICT', async () => {
    const { pool, manager } = await setup();
    await manager.create({ code: 'x', autorun: false }, alice);
    const [run, deleted] = await Promise.allSettled([
      manager.signal(1, 'run', alice),
      manager.delete(1, alice),
    ]);
    expect(run.status).toBe('fulfilled');
    expect(deleted).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT' } });
    (await pool.started(1)).finish();
    expect(await manager.wait(1, alice)).toMatchObject({ state: 'idle', status: 'success' });
  });

  it('autorun: false waits idle with status null until a run signal', async () => {
    const { pool, manager } = await setup();
    expect(await manager.create({ code: 'x', autorun: false }, alice)).toMatchObject({
      state: 'idle',
      status: null,
      run: 0,
      runs: 0,
    });
    expect(pool.executions).toHaveLength(0);
    expect(await manager.wait(1, alice)).toMatchObject({ state: 'idle', status: null });
    expect(await manager.getResult(1, alice)).toMatchObject({ outputs: [], stdout: '', stderr: '' });
    expect((await rejected(manager.signal(1, 'kill', alice))).code).toBe('CONFLICT');
    expect((await manager.signal(1, 'run', alice)).run).toBe(1);
    (await pool.started(1)).finish();
    expect(await manager.wait(1, alice)).toMatchObject({ status: 'success', run: 1 });
  });

  it('delete: idle only; then the pid is gone', async () => {
    const { pool, manager } = await setup();
    await manager.create({ code: 'x' }, alice);
    await pool.started(1);
    expect((await rejected(manager.delete(1, alice))).code).toBe('CONFLICT');
    pool.executions[0]!.finish();
    await manager.wait(1, alice);
    await manager.delete(1, alice);
    expect((await rejected(manager.get(1, alice))).code).toBe('NOT_FOUND');
    expect(manager.stats().byState.idle).toBe(0);
  });

  it('ends failed with the error when the pool refuses or its result rejects', async () => {
    const pool = new ManualPool(1);
    const refusing = {
      size: 1,
      execute: () => {
        throw new Error('pool closed');
      },
    };
    const manager = await createProcessManager({ pool: refusing });
    await manager.create({ code: 'x' }, alice);
    expect(await manager.get(1, alice)).toMatchObject({
      state: 'idle',
      status: 'failed',
      error: { message: 'pool closed' },
    });
    const rejecting = await createProcessManager({
      pool: {
        size: 1,
        execute: () => ({ result: Promise.reject(new RangeError('worker died')), kill() {} }),
      },
    });
    await rejecting.create({ code: 'x' }, alice);
    expect(await rejecting.wait(1, alice)).toMatchObject({ status: 'failed', error: { name: 'RangeError' } });
    expect(pool.executions).toHaveLength(0);
  });

  it('delivers outputs and logs found only in the final result (a returned value)', async () => {
    const { pool, manager, events } = await setup();
    await manager.create({ code: 'return 5' }, alice);
    const execution = await pool.started(1);
    execution.emit({ type: 'log', stream: 'stderr', text: 'warn ' });
    execution.finish({ outputs: [5], stderr: 'warn more' });
    await manager.wait(1, alice);
    expect(await manager.getRun(1, 1, alice)).toMatchObject({ outputs: [5], stderr: 'warn more' });
    const logTexts = events.flatMap(({ event }) => (event.type === 'log' ? [event.text] : []));
    expect(logTexts).toEqual(['warn ', 'more']);
  });
});

describe('process manager: output floods', () => {
  it('delivers a burst of events in slices, one per event-loop turn, then ends the run after the last', async () => {
    const { pool, manager, events } = await setup();
    await manager.create({ code: 'x' }, alice);
    const execution = await pool.started(1);
    const count = EVENTS_PER_TURN * 4 + 10;
    for (let i = 0; i < count; i++) execution.emit({ type: 'output', value: i });
    execution.finish();
    const outputs = () => events.filter(({ event }) => event.type === 'output').length;
    // Other work of the event loop runs between the slices: here, an immediate queued after the burst.
    const seenBetween = await new Promise<number>((resolve) => setImmediate(() => resolve(outputs())));
    expect(seenBetween).toBe(EVENTS_PER_TURN);
    await manager.wait(1, alice);
    const delivered = events.filter(({ event }) => event.type === 'output' || event.type === 'process');
    expect(
      delivered
        .filter(({ event }) => event.type === 'output')
        .map(({ event }) => 'value' in event && event.value),
    ).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(delivered.at(-1)?.event).toMatchObject({ type: 'process', state: 'idle', status: 'success' });
  });
});

describe('process manager: validation and limits', () => {
  it('defaults, clamps to maxima, and takes null as the maximum', async () => {
    const { manager } = await setup({
      defaults: { timeoutMs: 1000 },
      maxima: { timeoutMs: 5000, memoryLimitMb: 256 },
    });
    expect(await manager.create({ code: 'x', autorun: false }, alice)).toMatchObject({
      timeoutMs: 1000,
      memoryLimitMb: 128,
    });
    expect(
      await manager.create({ code: 'x', autorun: false, timeoutMs: 99_999, memoryLimitMb: 4096 }, alice),
    ).toMatchObject({
      timeoutMs: 5000,
      memoryLimitMb: 256,
    });
    expect((await manager.create({ code: 'x', autorun: false, timeoutMs: null }, alice)).timeoutMs).toBe(
      5000,
    );
  });

  it('rejects bad fields with the field named', async () => {
    const { manager } = await setup({ maxCodeBytes: 10 });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ code: 'x', timeoutMs: 0 }, 'VALIDATION', 'timeoutMs'],
      [{ code: 'x', timeoutMs: -5 }, 'VALIDATION', 'timeoutMs'],
      [{ code: 'x', timeoutMs: 1.5 }, 'VALIDATION', 'timeoutMs'],
      [{ code: 'x', timeoutMs: '100' }, 'VALIDATION', 'timeoutMs'],
      [{ code: 'x', memoryLimitMb: 0 }, 'VALIDATION', 'memoryLimitMb'],
      [{ code: 'x', memoryLimitMb: 7 }, 'VALIDATION', 'memoryLimitMb'],
      [{ code: 'x', ref: '   ' }, 'VALIDATION', 'ref'],
      [{ code: 'x', ref: 'r'.repeat(257) }, 'VALIDATION', 'ref'],
      [{ code: 'x', lang: 'python' }, 'VALIDATION', 'lang'],
      [{ code: 'é'.repeat(6) }, 'CODE_TOO_LARGE', 'code'],
      [{ code: 42 }, 'VALIDATION', 'code'],
    ];
    for (const [input, code, path] of cases) {
      const error = await rejected(manager.create(input as never, alice));
      expect({ code: error.code, path: error.path }, JSON.stringify(input)).toEqual({ code, path });
    }
    expect(
      (await manager.create({ code: 'x', ref: 'r'.repeat(256), lang: 'JavaScript', autorun: false }, alice))
        .lang,
    ).toBe('javascript');
    await expect(createProcessManager({ pool: new ManualPool(1), maxQueue: 0 })).rejects.toThrow(/maxQueue/);
  });

  it('refuses creation past maxQueue with QUEUE_FULL (429)', async () => {
    const { pool, manager } = await setup({ maxQueue: 2 });
    await manager.create({ code: '1' }, alice);
    await pool.started(1); // running: not in the queue
    await manager.create({ code: '2' }, alice);
    await manager.create({ code: '3' }, bob);
    const error = await rejected(manager.create({ code: '4' }, bob));
    expect([error.code, error.status]).toEqual(['QUEUE_FULL', 429]);
    // not autorun: allowed, but its run signal is refused while the queue is full
    await manager.create({ code: '5', autorun: false }, bob);
    expect((await rejected(manager.signal(4, 'run', bob))).code).toBe('QUEUE_FULL');
    expect(manager.stats().queueLength).toBe(2);
  });
});

describe('process manager: scheduling', () => {
  it('runs FIFO with concurrency = pool size', async () => {
    const { pool, manager } = await setup({ size: 2 });
    for (let i = 0; i < 5; i++) await manager.create({ code: `${i}` }, alice);
    expect(pool.executions.map((e) => e.request.code)).toEqual(['0', '1']);
    pool.executions[1]!.finish();
    await pool.started(3);
    pool.executions[0]!.finish();
    await pool.started(4);
    expect(pool.executions.map((e) => e.request.code)).toEqual(['0', '1', '2', '3']);
    expect(pool.active).toHaveLength(2);
  });

  it('is fair across principals: round-robin, not first come first served', async () => {
    const { pool, manager } = await setup({ size: 1 });
    await manager.create({ code: 'a0' }, alice); // takes the only slot
    for (let i = 1; i <= 50; i++) await manager.create({ code: `a${i}` }, alice);
    await manager.create({ code: 'b1' }, bob);
    await manager.create({ code: 'b2' }, bob);
    await manager.create({ code: 'r1' }, root);
    for (let n = 1; n <= 7; n++) (await pool.started(n)).finish();
    await pool.started(8);
    expect(pool.executions.map((e) => e.request.code)).toEqual([
      'a0',
      'a1',
      'b1',
      'r1',
      'a2',
      'b2',
      'a3',
      'a4',
    ]);
  });

  it('kill while queued removes it from the queue; the next one runs', async () => {
    const { pool, manager } = await setup({ size: 1 });
    await manager.create({ code: '1' }, alice);
    await manager.create({ code: '2' }, alice);
    await manager.create({ code: '3' }, alice);
    await manager.signal(2, 'kill', alice);
    (await pool.started(1)).finish();
    (await pool.started(2)).finish();
    expect(pool.executions.map((e) => e.request.code)).toEqual(['1', '3']);
    expect(await manager.get(2, alice)).toMatchObject({ state: 'idle', status: 'canceled', run: 1 });
  });
});

describe('process manager: ownership, events and replay', () => {
  it('clients see only their own processes; operators see all', async () => {
    const { manager } = await setup();
    await manager.create({ code: 'a', autorun: false, ref: 'r' }, alice);
    await manager.create({ code: 'b', autorun: false, ref: 'r' }, bob);
    expect((await rejected(manager.get(2, alice))).code).toBe('NOT_FOUND');
    expect((await rejected(manager.signal(2, 'run', alice))).code).toBe('NOT_FOUND');
    expect((await rejected(manager.getCode(2, alice))).code).toBe('NOT_FOUND');
    expect((await rejected(manager.delete(2, alice))).code).toBe('NOT_FOUND');
    await expect(manager.wait(2, alice)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await manager.list({}, alice)).items.map((p) => p.pid)).toEqual([1]);
    expect((await manager.list({ ref: 'r' }, root)).items.map((p) => p.pid)).toEqual([2, 1]);
    expect((await manager.list({ status: null, state: 'idle' }, root)).items).toHaveLength(2);
    expect(await manager.getCode(2, root)).toBe('b');
    expect((await manager.replay(0, { all: true }, alice)).map((e) => e.seq)).toEqual([1]);
    expect((await manager.replay(0, { all: true }, root)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await rejected(manager.replay(0, { pid: 2 }, alice))).code).toBe('NOT_FOUND');
  });

  it('replays exactly the events after since, by pid, ref or all', async () => {
    const { pool, manager, events } = await setup({ size: 2 });
    await manager.create({ code: 'a', ref: 'x' }, alice);
    await manager.create({ code: 'b', ref: 'y' }, alice);
    const [first, second] = [await pool.started(1), await pool.started(2)];
    first.emit({ type: 'output', value: { n: 1 } });
    second.emit({ type: 'log', stream: 'stdout', text: 'b' });
    first.finish();
    second.finish();
    await manager.wait(1, alice);
    await manager.wait(2, alice);
    const all = events.map(({ event }) => event);
    expect(await manager.replay(0, { all: true }, alice)).toEqual(all);
    for (let since = 0; since <= all.length; since++) {
      expect(await manager.replay(since, { all: true }, alice)).toEqual(all.slice(since));
    }
    const ofPid1 = all.filter((e) => 'pid' in e && e.pid === 1);
    expect(await manager.replay(0, { pid: 1 }, alice)).toEqual(ofPid1);
    expect(await manager.replay(0, { ref: 'x' }, alice)).toEqual(ofPid1);
    expect(manager.lastSeq()).toBe(all.at(-1)!.seq);
    expect((await rejected(manager.replay(-1, { all: true }, alice))).path).toBe('since');
    expect((await rejected(manager.replay(0, {}, alice))).code).toBe('VALIDATION');
  });

  it('counts processes by state and status, runs, tool calls and durations', async () => {
    const { pool, manager } = await setup({ size: 1 });
    await manager.create({ code: 'a' }, alice);
    await manager.create({ code: 'b' }, alice);
    await manager.create({ code: 'c', autorun: false }, alice);
    const execution = await pool.started(1);
    execution.emit({ type: 'tool', name: 'echo', durationMs: 2, isError: false });
    execution.emit({ type: 'tool', name: 'boom', durationMs: 3, isError: true });
    // Sandbox events are delivered once per event-loop turn.
    await new Promise((resolve) => setImmediate(resolve));
    let stats = manager.stats();
    expect(stats.byState).toEqual({ queued: 1, running: 1, suspended: 0, terminating: 0, idle: 1 });
    expect(stats).toMatchObject({
      queueLength: 1,
      running: 1,
      toolCalls: 2,
      toolErrors: 1,
      processesCreated: 3,
    });
    execution.finish({ status: 'failed', error: { name: 'Error', message: 'x' } });
    (await pool.started(2)).finish();
    await manager.wait(2, alice);
    stats = manager.stats();
    expect(stats.byStatus).toEqual({ success: 1, failed: 1, timeout: 0, canceled: 0, none: 1 });
    expect(stats.runDurationsMs.count).toBe(2);
    expect(stats.runDurationsMs.counts.at(-1)).toBe(2);
    expect(stats.runsStarted).toBe(2);
  });
});

describe('process manager: shutdown', () => {
  it('refuses new work, cancels queued, lets running finish within the grace period', async () => {
    const { pool, manager } = await setup({ size: 1 });
    await manager.create({ code: 'a' }, alice);
    await manager.create({ code: 'b' }, alice);
    const running = await pool.started(1);
    const closing = manager.shutdown({ graceMs: 60_000 });
    expect((await rejected(manager.create({ code: 'c' }, alice))).code).toBe('SHUTTING_DOWN');
    expect((await rejected(manager.create({ code: 'c' }, alice))).status).toBe(503);
    expect(await manager.get(2, alice)).toMatchObject({ state: 'idle', status: 'canceled' });
    running.finish();
    await closing;
    expect((await manager.get(1, alice)).status).toBe('success');
    expect(pool.executions).toHaveLength(1);
  });

  it('kills what is still running when the grace period ends', async () => {
    const { pool, manager } = await setup({ size: 1 });
    await manager.create({ code: 'a' }, alice);
    const running = await pool.started(1);
    await manager.shutdown({ graceMs: 10 });
    expect(running.killed).toBe(true);
    expect((await manager.get(1, alice)).status).toBe('canceled');
  });
});
