import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { decodeOutputValue, encodeOutputValue } from '@mci/protocol';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { expectByteCounts, V3_ROWS, writeByteHistory } from '../../../test/support/byte-counts.ts';
import { recountSqliteFile } from '../../../test/support/sqlite-equivalence.ts';
import { describeProcessStoreContract } from '../../../test/support/store-contract.ts';
import { storedProcess } from '../../../test/support/stored-process.ts';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';
import { openSqliteStore } from './open-sqlite.ts';
import { openDatabase } from './sqlite-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'mci-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `store-${++files}`, 'mci.db');

describeProcessStoreContract('sqlite in memory', () => openSqliteStore({ path: ':memory:' }));
describeProcessStoreContract('sqlite file', () => openSqliteStore({ path: freshPath() }));
describeProcessStoreContract('sqlite file, 5 ms batches', () =>
  openSqliteStore({ path: freshPath(), flushDelayMs: 5 }),
);

const record = storedProcess;

describe('sqlite store', () => {
  it('keeps everything across a close and reopen, and counters continue exactly', async () => {
    const path = freshPath();
    const first = await openSqliteStore({ path });
    expect(first.schema).toEqual({ from: 0, to: SCHEMA_VERSION });
    first.putProcess(record(1, { ref: 'chat-1', state: 'idle', status: 'success', runs: 1 }));
    first.insertRun(1, 1, { state: 'queued', status: null, queuedAt: '2026-01-01T00:00:01.000Z' });
    const original = {
      map: new Map([['a', 1]]),
      when: new Date(0),
      bytes: new Uint8Array([1, 2]),
      nested: [1n],
    };
    const value = encodeOutputValue(original);
    first.appendOutput(1, 1, 10, value);
    first.appendEvent(
      { type: 'output', seq: 10, pid: 1, run: 1, ref: 'chat-1', value },
      { owner: 'alice', pid: 1, ref: 'chat-1' },
    );
    first.appendLog(1, 1, 11, 'stdout', 'hello\n');
    first.appendEvent(
      { type: 'log', seq: 11, pid: 1, run: 1, ref: 'chat-1', stream: 'stdout', text: 'hello\n' },
      { owner: 'alice', pid: 1, ref: 'chat-1' },
    );
    first.updateRun(1, 1, {
      state: 'idle',
      status: 'success',
      endedAt: '2026-01-01T00:00:02.000Z',
      durationMs: 3,
    });
    await first.close();

    const second = await openSqliteStore({ path });
    expect(second.schema).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    expect(second.counters()).toEqual({ lastPid: 1, lastSeq: 11 });
    expect(await second.getProcess(1)).toEqual(
      record(1, { ref: 'chat-1', state: 'idle', status: 'success', runs: 1 }),
    );
    const run = (await second.getRun(1, 1))!;
    expect(run).toMatchObject({
      state: 'idle',
      status: 'success',
      stdout: 'hello\n',
      stderr: '',
      durationMs: 3,
    });
    expect(run.outputs).toEqual([value]);
    expect(decodeOutputValue(run.outputs[0])).toEqual(original);
    // output and log events come back from the outputs and logs tables (stored once), with their route.
    expect(await second.eventsSince(0, { ref: 'chat-1' })).toEqual([
      {
        event: { type: 'output', seq: 10, pid: 1, run: 1, ref: 'chat-1', value },
        route: { owner: 'alice', pid: 1, ref: 'chat-1' },
      },
      {
        event: { type: 'log', seq: 11, pid: 1, run: 1, ref: 'chat-1', stream: 'stdout', text: 'hello\n' },
        route: { owner: 'alice', pid: 1, ref: 'chat-1' },
      },
    ]);
    await second.close();
  });

  it('reads see writes still waiting for their batch', async () => {
    const store = await openSqliteStore({ path: freshPath(), flushDelayMs: 60_000 });
    store.putProcess(record(7));
    store.updateProcess(7, { state: 'queued', status: null, runs: 1 });
    expect(await store.getProcess(7)).toMatchObject({ state: 'queued', runs: 1 });
    await store.close();
  });

  it('expires idle processes past the age or the count, oldest change first, never live ones', async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    for (let pid = 1; pid <= 6; pid++)
      store.putProcess(record(pid, { state: pid === 2 ? 'running' : 'idle' }));
    store.putProcess(record(7, { state: 'queued' }));
    const now = Date.now();
    const day = 86_400_000;
    // Nothing is old yet; 7 processes, keep at most 4: the 3 oldest idle ones go (pid 2 is running).
    expect(await store.expiredProcesses({ maxAgeMs: day, maxProcesses: 4, limit: 100, now })).toEqual([
      1, 3, 4,
    ]);
    expect(await store.expiredProcesses({ maxAgeMs: day, maxProcesses: 4, limit: 2, now })).toEqual([1, 3]);
    // A week later every idle one is too old; the running and queued ones stay.
    expect(
      await store.expiredProcesses({ maxAgeMs: day, maxProcesses: 100, limit: 100, now: now + 7 * day }),
    ).toEqual([1, 3, 4, 5, 6]);
    expect(await store.expiredProcesses({ maxAgeMs: day, maxProcesses: 100, limit: 100, now })).toEqual([]);
    await store.close();
  });

  it('keeps the stored bytes of each process through outputs, logs, a run again, a replaced record and a delete', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path });
    const expected = await writeByteHistory(store);
    await store.close();
    await expectByteCounts(recountSqliteFile(path), expected);
  });

  it('counts the bytes of the processes of a version 3 database when it migrates it', async () => {
    const path = freshPath();
    const old = await openDatabase(path, { migrations: MIGRATIONS.filter((m) => m.version <= 3) });
    old.db.exec(V3_ROWS.processes);
    old.db.exec(V3_ROWS.outputs((hex) => `X'${hex}'`));
    old.db.exec(V3_ROWS.logs);
    old.close();
    const store = await openSqliteStore({ path });
    expect(store.schema).toEqual({ from: 3, to: SCHEMA_VERSION });
    // bob holds 2 bytes, alice 14: a quota of 10 takes alice's process only.
    const policy = { maxAgeMs: Date.now(), maxProcesses: 100, maxBytes: 10, limit: 100, now: 1000 };
    expect(await store.expiredProcesses(policy)).toEqual([1]);
    await store.close();
    await expectByteCounts(recountSqliteFile(path), V3_ROWS.expected);
  });

  it('deletes unowned events (intents, stream results) by age', async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    const intent = { type: 'intent', seq: 1, streamId: 's', index: 0, lang: 'ts', attributes: {} } as const;
    store.appendEvent(intent, { owner: 'alice', streamId: 's' });
    store.deleteUnownedEvents(Date.now() - 60_000);
    expect(await store.eventsSince(0, {})).toHaveLength(1);
    store.deleteUnownedEvents(Date.now() + 1);
    expect(await store.eventsSince(0, {})).toEqual([]);
    expect(store.counters().lastSeq).toBe(1);
    await store.close();
  });

  it('checkpoints the WAL into the database file on a worker thread; other readers can look', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path, checkpointIntervalMs: 20 });
    const empty = statSync(path).size;
    for (let pid = 1; pid <= 200; pid++) store.putProcess(record(pid, { code: 'x'.repeat(1000) }));
    store.flush();
    await vi.waitFor(() => expect(statSync(path).size).toBeGreaterThan(empty + 200_000), { timeout: 10_000 });
    const reader = new DatabaseSync(path, { readOnly: true });
    expect(reader.prepare('SELECT count(*) AS n FROM processes').get()).toEqual({ n: 200 });
    reader.close();
    await store.close();
    // A clean close leaves no WAL behind.
    expect(statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0).toBe(0);
  });

  it('refuses use after close', async () => {
    const store = await openSqliteStore({ path: ':memory:' });
    await store.close();
    await store.close();
    await expect(store.getProcess(1)).rejects.toThrow(expect.objectContaining({ code: 'STORE_CLOSED' }));
  });
});
