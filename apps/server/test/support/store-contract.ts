import type { ServerEvent } from '@mci/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type {
  EventRoute,
  ProcessStore,
  StoredCall,
  StoredEventFilter,
  StoredProcess,
} from '../../src/processes/process-store.ts';
import { storedProcess } from './stored-process.ts';

/**
 * The contract every {@link ProcessStore} passes (the in-memory, SQLite and PostgreSQL stores run the
 * same suite): records, runs with outputs and logs, the event log and replay filters, counters.
 */
export function describeProcessStoreContract(
  name: string,
  createStore: () => ProcessStore | Promise<ProcessStore>,
) {
  describe(`ProcessStore contract: ${name}`, () => {
    let store: ProcessStore | undefined;
    const open = async () => {
      store = await createStore();
      return store;
    };
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    // Created a second apart, in pid order.
    const record = (pid: number, fields: Partial<StoredProcess> = {}): StoredProcess =>
      storedProcess(pid, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, pid)).toISOString(), ...fields });

    it('starts empty with zero counters', async () => {
      const s = await open();
      expect(s.counters()).toEqual({ lastPid: 0, lastSeq: 0 });
      expect(await s.listProcesses({})).toEqual([]);
      expect(await s.getProcess(1)).toBeUndefined();
      expect(await s.getRun(1, 1)).toBeUndefined();
      expect(await s.eventsSince(0, {})).toEqual([]);
    });

    it('stores, updates, filters (newest first) and deletes process records', async () => {
      const s = await open();
      s.putProcess(
        record(1, { ref: 'r', metadata: { streamId: 's', intentIndex: 0, attributes: { exec: true } } }),
      );
      s.putProcess(record(2, { owner: 'bob', ref: 'r' }));
      s.putProcess(record(3, { state: 'queued', runs: 1 }));
      expect(await s.getProcess(1)).toEqual(
        record(1, { ref: 'r', metadata: { streamId: 's', intentIndex: 0, attributes: { exec: true } } }),
      );
      s.updateProcess(2, { state: 'idle', status: 'failed', runs: 3 });
      expect(await s.getProcess(2)).toMatchObject({ status: 'failed', runs: 3, owner: 'bob' });
      expect((await s.listProcesses({})).map((p) => p.pid)).toEqual([3, 2, 1]);
      expect((await s.listProcesses({ owner: 'alice' })).map((p) => p.pid)).toEqual([3, 1]);
      expect((await s.listProcesses({ ref: 'r' })).map((p) => p.pid)).toEqual([2, 1]);
      expect((await s.listProcesses({ state: 'queued' })).map((p) => p.pid)).toEqual([3]);
      expect((await s.listProcesses({ status: null })).map((p) => p.pid)).toEqual([3, 1]);
      expect((await s.listProcesses({ status: 'failed', owner: 'bob' })).map((p) => p.pid)).toEqual([2]);
      // Keyset pages: below a pid, at most `limit`, the filters still applied.
      expect((await s.listProcesses({ beforePid: 3, limit: 1 })).map((p) => p.pid)).toEqual([2]);
      expect((await s.listProcesses({ owner: 'alice', beforePid: 3 })).map((p) => p.pid)).toEqual([1]);
      expect(await s.listProcesses({ beforePid: 1 })).toEqual([]);
      expect(s.counters().lastPid).toBe(3);
      s.deleteProcess(3);
      expect(await s.getProcess(3)).toBeUndefined();
      expect(s.counters().lastPid).toBe(3);
    });

    it('returns copies: changing a returned record does not change the store', async () => {
      const s = await open();
      s.putProcess(record(1));
      const copy = (await s.getProcess(1))!;
      copy.state = 'running';
      expect((await s.getProcess(1))!.state).toBe('idle');
    });

    it('keeps runs with their outputs (in order), logs, error and timestamps', async () => {
      const s = await open();
      s.putProcess(record(1, { runs: 2 }));
      s.insertRun(1, 1, { state: 'queued', status: null, queuedAt: '2026-01-01T00:00:01.000Z' });
      s.updateRun(1, 1, { state: 'running', startedAt: '2026-01-01T00:00:02.000Z' });
      s.appendOutput(1, 1, 5, { a: [1, 'two'] });
      s.appendLog(1, 1, 6, 'stdout', 'one\n');
      s.appendOutput(1, 1, 7, 3);
      s.appendLog(1, 1, 8, 'stdout', 'two\n');
      s.appendLog(1, 1, 9, 'stderr', 'warn');
      s.updateRun(1, 1, {
        state: 'idle',
        status: 'failed',
        endedAt: '2026-01-01T00:00:03.000Z',
        durationMs: 12.5,
        error: { name: 'TypeError', message: 'bad', line: 2, column: 3 },
        truncated: true,
      });
      s.insertRun(1, 2, { state: 'queued', status: null, queuedAt: '2026-01-01T00:00:04.000Z' });
      const first = {
        pid: 1,
        run: 1,
        state: 'idle',
        status: 'failed',
        queuedAt: '2026-01-01T00:00:01.000Z',
        startedAt: '2026-01-01T00:00:02.000Z',
        endedAt: '2026-01-01T00:00:03.000Z',
        durationMs: 12.5,
        error: { name: 'TypeError', message: 'bad', line: 2, column: 3 },
        truncated: true,
      };
      const second = { pid: 1, run: 2, state: 'queued', status: null, queuedAt: '2026-01-01T00:00:04.000Z' };
      expect(await s.getRun(1, 1)).toEqual({
        ...first,
        outputs: [{ a: [1, 'two'] }, 3],
        stdout: 'one\ntwo\n',
        stderr: 'warn',
      });
      expect(await s.getRun(1, 2)).toEqual({ ...second, outputs: [], stdout: '', stderr: '' });
      expect(await s.getRun(1, 3)).toBeUndefined();
      // The runs without outputs and logs, highest first, below a run number.
      expect(await s.listRuns(1, 3, 10)).toEqual([second, first]);
      expect((await s.listRuns(1, 2, 10)).map((run) => run.run)).toEqual([1]);
      expect((await s.listRuns(1, 3, 1)).map((run) => run.run)).toEqual([2]);
      s.deleteProcess(1);
      expect(await s.getRun(1, 1)).toBeUndefined();
      expect(await s.listRuns(1, 3, 10)).toEqual([]);
    });

    it('keeps the files of runs byte for byte, the first of a name, until the process is deleted', async () => {
      const s = await open();
      s.putProcess(record(1, { runs: 1 }));
      s.insertRun(1, 1, { state: 'running', status: null });
      const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
      s.putFile(1, 1, { name: 'a.bin', mimeType: 'application/octet-stream', data: bytes });
      s.putFile(1, 1, { name: 'a.bin', mimeType: 'text/plain', data: Uint8Array.of(1) });
      s.putFile(1, 1, { name: 'notes.txt', mimeType: 'text/plain', data: new TextEncoder().encode('héllo') });
      const file = await s.getFile(1, 1, 'a.bin');
      expect(file?.mimeType).toBe('application/octet-stream');
      expect(file && Array.from(file.data)).toEqual(Array.from(bytes));
      expect(new TextDecoder().decode((await s.getFile(1, 1, 'notes.txt'))?.data)).toBe('héllo');
      expect(await s.getFile(1, 1, 'missing')).toBeUndefined();
      expect(await s.getFile(1, 2, 'a.bin')).toBeUndefined();
      s.deleteProcess(1);
      expect(await s.getFile(1, 1, 'a.bin')).toBeUndefined();
    });

    it('keeps the calls of runs by position, a call written again replaced, until the run starts again', async () => {
      const s = await open();
      s.putProcess(record(1, { runs: 2 }));
      s.insertRun(1, 1, { state: 'running', status: null });
      s.insertRun(1, 2, { state: 'running', status: null });
      const call = (position: number, fields: Partial<StoredCall> = {}): StoredCall => ({
        position,
        kind: 'tool',
        name: `tool_${position}`,
        startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, position)).toISOString(),
        durationMs: 1.5,
        ok: true,
        decision: 'allow',
        input: { n: position, text: 'héllo' },
        inputBytes: 25,
        inputHash: `hash-${position}`,
        result: { bytes: 10, isError: false, contentTypes: ['text'], value: { content: [] } },
        ...fields,
      });
      for (const position of [2, 0, 3, 1]) s.putCall(1, 1, call(position));
      s.putCall(1, 2, call(0, { name: 'other' }));
      const cut = call(1, {
        result: { bytes: 9000, isError: false, contentTypes: ['text'], truncated: true },
        replay: { content: [{ type: 'text', text: 'x'.repeat(9000) }] },
      });
      s.putCall(1, 1, cut);
      const all = await s.listCalls(1, 1, -1);
      expect(all.map((c) => c.position)).toEqual([0, 1, 2, 3]);
      expect(all[1]).toEqual(cut);
      expect(all[0]).toEqual(call(0));
      expect((await s.listCalls(1, 1, 0, 2)).map((c) => c.position)).toEqual([1, 2]);
      expect(await s.listCalls(1, 1, 3)).toEqual([]);
      expect((await s.listCalls(1, 2, -1)).map((c) => c.name)).toEqual(['other']);
      expect(await s.listCalls(2, 1, -1)).toEqual([]);
      // A run started again (recovery) starts with no calls; a deleted process has none.
      s.insertRun(1, 2, { state: 'queued', status: null });
      expect(await s.listCalls(1, 2, -1)).toEqual([]);
      s.deleteProcess(1);
      expect(await s.listCalls(1, 1, -1)).toEqual([]);
    });

    it('logs events in seq order and filters them by seq, owner, pid and ref', async () => {
      const s = await open();
      const routes: EventRoute[] = [
        { owner: 'alice', pid: 1, ref: 'x' },
        { owner: 'bob', pid: 2 },
        { owner: 'alice', ref: 'x', streamId: 's1' },
        { owner: 'alice', pid: 1, ref: 'x' },
      ];
      const events: ServerEvent[] = [
        { type: 'output', seq: 1, pid: 1, run: 1, value: { big: 'value' } },
        { type: 'log', seq: 2, pid: 2, run: 1, stream: 'stdout', text: 'hi' },
        {
          type: 'intent',
          seq: 3,
          streamId: 's1',
          index: 0,
          lang: 'py',
          attributes: { exec: true },
          rejected: 'no',
        },
        { type: 'tool', seq: 4, pid: 1, run: 1, name: 't', durationMs: 1, isError: false },
      ];
      s.putProcess(record(1));
      for (const [i, event] of events.entries()) s.appendEvent(event, routes[i]!);
      const seqs = async (since: number, filter = {}) =>
        (await s.eventsSince(since, filter)).map((e) => e.event.seq);
      expect(await s.eventsSince(0, {})).toEqual(events.map((event, i) => ({ event, route: routes[i] })));
      expect(await seqs(2)).toEqual([3, 4]);
      expect(await seqs(4)).toEqual([]);
      expect(await seqs(0, { owner: 'alice' })).toEqual([1, 3, 4]);
      expect(await seqs(0, { pid: 1 })).toEqual([1, 4]);
      expect(await seqs(1, { ref: 'x' })).toEqual([3, 4]);
      expect(await seqs(0, { owner: 'bob', ref: 'x' })).toEqual([]);
      expect(s.counters().lastSeq).toBe(4);
      s.deleteProcess(1);
      expect(await seqs(0)).toEqual([2, 3]);
      expect(s.counters()).toEqual({ lastPid: 1, lastSeq: 4 });
    });

    it('ends a read of events with the one that brings the payload read to maxBytes', async () => {
      const s = await open();
      s.putProcess(record(1));
      const text = 'x'.repeat(1000);
      for (let seq = 1; seq <= 6; seq++) {
        const event: ServerEvent =
          seq % 2 === 1
            ? { type: 'output', seq, pid: 1, run: 1, value: text }
            : { type: 'log', seq, pid: 1, run: 1, stream: 'stdout', text };
        s.appendEvent(event, { owner: 'alice', pid: 1 });
      }
      const seqs = async (since: number, filter: StoredEventFilter) =>
        (await s.eventsSince(since, filter)).map((e) => e.event.seq);
      expect(await seqs(0, { maxBytes: 2500 })).toEqual([1, 2, 3]);
      expect(await seqs(3, { maxBytes: 2500 })).toEqual([4, 5, 6]);
      expect(await seqs(0, { maxBytes: 1 })).toEqual([1]);
      expect(await seqs(0, { maxBytes: 2500, through: 2 })).toEqual([1, 2]);
      expect(await seqs(1, { maxBytes: 2500, owner: 'bob' })).toEqual([]);
      expect(await seqs(0, { maxBytes: 10 ** 6 })).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });
}
