import { encodeOutputValue, type ProcessState, type ProcessStatus, type ServerEvent } from '@mci/protocol';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ProcessStore } from '../../src/processes/process-store.ts';
import { wireRoute } from '../../src/processes/run-output.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';

// Model-based property shared by the durable stores' tests: for every sequence of valid writes, a
// durable store reads exactly like the in-memory store: through its cache (large or tiny, so entries
// are evicted), while writes wait for their batch, after a commit, and after a reopen (cold cache,
// everything from the database).

type Op =
  | { op: 'create'; owner: string; ref: string | undefined }
  | { op: 'update'; target: number; state: ProcessState; status: ProcessStatus }
  | { op: 'run'; target: number }
  | { op: 'updateRun'; target: number; state: ProcessState; status: ProcessStatus; stamp: number }
  | { op: 'output'; target: number; value: unknown }
  | { op: 'log'; target: number; stream: 'stdout' | 'stderr'; text: string }
  | { op: 'event'; target: number }
  | { op: 'delete'; target: number }
  | { op: 'commit' }
  | { op: 'reopen' };

const states = fc.constantFrom<ProcessState>('queued', 'running', 'terminating', 'idle');
const statuses = fc.constantFrom<ProcessStatus>(null, 'success', 'failed', 'timeout', 'canceled');
const target = fc.nat(1000);
const value = fc
  .oneof(
    fc.integer(),
    fc.string(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.boolean(), { maxKeys: 3 }),
    fc.date({ noInvalidDate: true }),
  )
  .map(encodeOutputValue);
/** Sequences of valid store writes, commits and reopens. */
export const storeOps = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('create' as const),
        owner: fc.constantFrom('a', 'b'),
        ref: fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ op: fc.constant('update' as const), target, state: states, status: statuses }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('run' as const), target }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('updateRun' as const),
        target,
        state: states,
        status: statuses,
        stamp: fc.nat(1e9),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('output' as const), target, value }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('log' as const),
        target,
        stream: fc.constantFrom<'stdout' | 'stderr'>('stdout', 'stderr'),
        text: fc.string({ maxLength: 8 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('event' as const), target }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), target }) },
    { weight: 1, arbitrary: fc.constant({ op: 'commit' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'reopen' as const }) },
  ),
  { maxLength: 60 },
) as fc.Arbitrary<Op[]>;

/** Everything a store answers, for comparison. */
async function contents(store: ProcessStore) {
  const processes = await store.listProcesses({});
  return {
    counters: store.counters(),
    processes,
    byGet: await Promise.all(processes.map((p) => store.getProcess(p.pid))),
    runs: await Promise.all(
      processes.flatMap((p) => Array.from({ length: p.runs }, (_, i) => store.getRun(p.pid, i + 1))),
    ),
    owned: (await store.listProcesses({ owner: 'a', status: null })).map((p) => p.pid),
    events: await store.eventsSince(0, {}),
    byRef: await store.eventsSince(1, { ref: 'r1', owner: 'b' }),
  };
}

/** The store-equivalence property in two store settings; each runs as one test. */
export interface EquivalenceChecks {
  /** With the default cache. */
  defaultCache(): Promise<void>;
  /** With a cache of two processes (constant eviction) and per-turn batches. */
  evictingCache(): Promise<void>;
}

/** Each process row's `stored_bytes` and the bytes of its `outputs` and `logs` rows counted anew. */
export type ByteRecount = () => Promise<Array<{ pid: number; stored: number; counted: number }>>;

/** {@link ByteRecount}'s rows from the rows {@link RECOUNT_SQL} read (numbers may come as strings). */
export function recountRows(rows: Iterable<Record<string, unknown>>): Awaited<ReturnType<ByteRecount>> {
  return [...rows].map((row) => ({
    pid: Number(row.pid),
    stored: Number(row.stored),
    counted: Number(row.counted),
  }));
}

/** The cache and batching settings a check gives the store under test. */
export interface StoreTuning {
  cache?: { processes: number; bytes: number };
  flushDelayMs?: number;
}

/** Where one write sequence runs: the store under test, opened as often as the sequence asks. */
export interface SequenceTarget {
  open(): Promise<ProcessStore>;
  recount: ByteRecount;
}

/**
 * The store-equivalence property on one engine, `numRuns` write sequences per check. `prepare` is
 * called once per check with its tuning and returns what gives each sequence its own empty store.
 */
export function equivalenceChecks(
  numRuns: number,
  prepare: (tuning: StoreTuning) => Promise<() => Promise<SequenceTarget>>,
): EquivalenceChecks {
  const check = async (tuning: StoreTuning, commitMs: number) => {
    const nextTarget = await prepare(tuning);
    await fc.assert(
      fc.asyncProperty(storeOps, async (ops) => {
        const { open, recount } = await nextTarget();
        await checkEquivalence(ops, open, commitMs, recount);
      }),
      { numRuns },
    );
  };
  return {
    defaultCache: () => check({}, 6),
    evictingCache: () => check({ cache: { processes: 2, bytes: 4096 }, flushDelayMs: 0 }, 1),
  };
}

/**
 * SQL that reads {@link ByteRecount}'s rows (`length` is SQLite's; Postgres spells it `octet_length`
 * and needs no cast).
 */
export const RECOUNT_SQL = (length: (column: string) => string) => `
  SELECT p.pid, p.stored_bytes AS stored,
         coalesce((SELECT sum(${length('value')}) FROM outputs o WHERE o.pid = p.pid), 0)
       + coalesce((SELECT sum(${length('text')}) FROM logs l WHERE l.pid = p.pid), 0) AS counted
    FROM processes p ORDER BY p.pid`;

/**
 * Applies `ops` to the in-memory store and to `open()`'s store (reopened on `reopen` ops and at the
 * end), and expects both to read alike throughout; a `commit` op waits `commitMs`. At the end, with
 * the store closed, expects every process's `stored_bytes` to equal its bytes counted by `recount`.
 */
export async function checkEquivalence(
  ops: Op[],
  open: () => ProcessStore | Promise<ProcessStore>,
  commitMs: number,
  recount: ByteRecount,
): Promise<void> {
  const model = createMemoryStore();
  let store = await open();
  const live: Array<{ pid: number; owner: string; ref?: string; runs: number }> = [];
  let seq = 0;
  const both = (fn: (s: ProcessStore) => void) => {
    fn(model);
    fn(store);
  };
  try {
    for (const op of ops) {
      const chosen = live.length === 0 ? undefined : live[('target' in op ? op.target : 0) % live.length]!;
      switch (op.op) {
        case 'create': {
          const pid = model.counters().lastPid + 1;
          live.push({ pid, owner: op.owner, ...(op.ref && { ref: op.ref }), runs: 0 });
          both((s) =>
            s.putProcess({
              pid,
              owner: op.owner,
              code: `output(${pid})`,
              lang: 'ts',
              ...(op.ref && { ref: op.ref }),
              createdAt: new Date(pid * 1000).toISOString(),
              timeoutMs: 1000,
              memoryLimitMb: 64,
              ...(pid % 2 === 0 && { metadata: { streamId: `s${pid}`, intentIndex: 0 } }),
              state: 'idle',
              status: null,
              runs: 0,
            }),
          );
          break;
        }
        case 'update':
          if (chosen)
            both((s) =>
              s.updateProcess(chosen.pid, { state: op.state, status: op.status, runs: chosen.runs }),
            );
          break;
        case 'run':
          if (!chosen) break;
          chosen.runs++;
          both((s) =>
            s.insertRun(chosen.pid, chosen.runs, {
              state: 'queued',
              status: null,
              queuedAt: new Date(0).toISOString(),
            }),
          );
          both((s) => s.updateProcess(chosen.pid, { state: 'queued', status: null, runs: chosen.runs }));
          break;
        case 'updateRun':
          if (chosen?.runs)
            both((s) =>
              s.updateRun(chosen.pid, chosen.runs, {
                state: op.state,
                status: op.status,
                endedAt: new Date(op.stamp).toISOString(),
                durationMs: op.stamp / 7,
                ...(op.status === 'failed' && { error: { name: 'Error', message: 'no', line: 1 } }),
              }),
            );
          break;
        case 'output':
          if (chosen?.runs) {
            const event = {
              type: 'output',
              seq: ++seq,
              pid: chosen.pid,
              run: chosen.runs,
              ...wireRoute(routeOf(chosen)),
              value: op.value,
            } as const;
            both((s) => s.appendOutput(chosen.pid, chosen.runs, event.seq, op.value));
            both((s) => s.appendEvent(event, routeOf(chosen)));
          }
          break;
        case 'log':
          if (chosen?.runs) {
            const event = {
              type: 'log',
              seq: ++seq,
              pid: chosen.pid,
              run: chosen.runs,
              ...wireRoute(routeOf(chosen)),
              stream: op.stream,
              text: op.text,
            } as const;
            both((s) => s.appendLog(chosen.pid, chosen.runs, event.seq, op.stream, op.text));
            both((s) => s.appendEvent(event, routeOf(chosen)));
          }
          break;
        case 'event': {
          const event: ServerEvent = chosen
            ? {
                type: 'tool',
                seq: ++seq,
                pid: chosen.pid,
                run: chosen.runs,
                name: 't',
                durationMs: 1,
                isError: false,
              }
            : {
                type: 'intent',
                seq: ++seq,
                streamId: 's',
                index: 0,
                lang: 'py',
                attributes: {},
                rejected: 'no',
              };
          both((s) =>
            s.appendEvent(event, chosen ? routeOf(chosen) : { owner: 'b', ref: 'r1', streamId: 's' }),
          );
          break;
        }
        case 'delete':
          if (!chosen) break;
          live.splice(live.indexOf(chosen), 1);
          both((s) => s.deleteProcess(chosen.pid));
          break;
        case 'commit':
          await new Promise((resolve) => setTimeout(resolve, commitMs));
          break;
        case 'reopen':
          await store.close();
          store = await open();
          break;
      }
      if (chosen) {
        // The hot-path reads: through the cache, with writes still waiting.
        expect(await store.getProcess(chosen.pid)).toEqual(await model.getProcess(chosen.pid));
        if (chosen.runs)
          expect(await store.getRun(chosen.pid, chosen.runs)).toEqual(
            await model.getRun(chosen.pid, chosen.runs),
          );
      }
    }
    expect(await contents(store)).toEqual(await contents(model));
    await store.close();
    store = await open();
    expect(await contents(store)).toEqual(await contents(model));
  } finally {
    await store.close();
  }
  const counts = await recount();
  expect(counts.map(({ pid }) => pid)).toEqual(live.map(({ pid }) => pid).sort((a, b) => a - b));
  for (const row of counts) expect(row).toEqual({ ...row, stored: row.counted });
}

function routeOf(p: { pid: number; owner: string; ref?: string }) {
  return {
    owner: p.owner,
    pid: p.pid,
    ...(p.ref && { ref: p.ref }),
    ...(p.pid % 2 === 0 && { streamId: `s${p.pid}` }),
  };
}
