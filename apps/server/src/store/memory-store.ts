import type { ServerEvent } from '@mci/protocol';
import type { RunFile } from '@mci/sandbox';
import type {
  ProcessStore,
  RunUpdate,
  StoredCall,
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from '../processes/process-store.ts';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most events kept for replay; past it the oldest are dropped (a client asking for older ones gets
   * what is left). @default 100000
   */
  maxEvents?: number;
}

/**
 * A {@link ProcessStore} in memory: everything is lost when the server stops. The default store, and
 * the one unit tests of the process manager use. Writes take effect at once, so `committed()`
 * resolves at once and `health()` is always ok.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): ProcessStore {
  const maxEvents = options.maxEvents ?? 100_000;
  if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) {
    throw new RangeError(`maxEvents must be a positive integer, got ${String(maxEvents)}`);
  }
  const processes = new Map<number, StoredProcess>();
  const runs = new Map<number, StoredRun[]>();
  /** Files by process, then `run/name`. */
  const files = new Map<number, Map<string, RunFile>>();
  /** Calls by process, then run, then position. */
  const calls = new Map<number, Map<number, Map<number, StoredCall>>>();
  let events: StoredEvent[] = [];
  let lastPid = 0;
  let lastSeq = 0;

  const runOf = (pid: number, run: number): StoredRun => {
    const found = runs.get(pid)?.[run - 1];
    if (!found) throw new Error(`no run ${run} of process ${pid} in the store`);
    return found;
  };
  const matches = (record: StoredProcess, filter: StoredProcessFilter) =>
    (filter.owner === undefined || record.owner === filter.owner) &&
    (filter.state === undefined || record.state === filter.state) &&
    (filter.status === undefined || record.status === filter.status) &&
    (filter.ref === undefined || record.ref === filter.ref) &&
    (filter.streamId === undefined || record.metadata?.streamId === filter.streamId) &&
    (filter.session === undefined || record.session === filter.session) &&
    (filter.beforePid === undefined || record.pid < filter.beforePid) &&
    filter.node === undefined;

  return {
    counters: () => ({ lastPid, lastSeq }),
    putProcess(record) {
      processes.set(record.pid, { ...record });
      lastPid = Math.max(lastPid, record.pid);
    },
    updateProcess(pid, update) {
      const record = processes.get(pid);
      if (!record) throw new Error(`no process ${pid} in the store`);
      record.state = update.state;
      record.status = update.status;
      record.runs = update.runs;
    },
    async getProcess(pid) {
      const record = processes.get(pid);
      return record && { ...record };
    },
    async listProcesses(filter) {
      const found: StoredProcess[] = [];
      for (const record of processes.values()) if (matches(record, filter)) found.push({ ...record });
      return found.sort((a, b) => b.pid - a.pid).slice(0, filter.limit);
    },
    deleteProcess(pid) {
      processes.delete(pid);
      runs.delete(pid);
      files.delete(pid);
      calls.delete(pid);
      events = events.filter((stored) => stored.route.pid !== pid);
    },
    insertRun(pid, run, init: RunUpdate) {
      const list = runs.get(pid) ?? [];
      list[run - 1] = {
        pid,
        run,
        state: 'queued',
        status: null,
        outputs: [],
        stdout: '',
        stderr: '',
        ...init,
      };
      runs.set(pid, list);
      calls.get(pid)?.delete(run);
    },
    updateRun(pid, run, update) {
      Object.assign(runOf(pid, run), update);
    },
    appendOutput(pid, run, _seq, value) {
      runOf(pid, run).outputs.push(value);
    },
    appendLog(pid, run, _seq, stream, text) {
      const target = runOf(pid, run);
      target[stream] += text;
    },
    putFile(pid, run, file) {
      const byKey = files.get(pid) ?? new Map<string, RunFile>();
      files.set(pid, byKey);
      const key = `${run}/${file.name}`;
      if (!byKey.has(key)) byKey.set(key, file);
    },
    async getFile(pid, run, name) {
      return files.get(pid)?.get(`${run}/${name}`);
    },
    putCall(pid, run, call) {
      const byRun = calls.get(pid) ?? new Map<number, Map<number, StoredCall>>();
      calls.set(pid, byRun);
      const byPosition = byRun.get(run) ?? new Map<number, StoredCall>();
      byRun.set(run, byPosition);
      byPosition.set(call.position, structuredClone(call));
    },
    async listCalls(pid, run, after, limit) {
      const found = [...(calls.get(pid)?.get(run)?.values() ?? [])]
        .filter((call) => call.position > after)
        .sort((a, b) => a.position - b.position);
      return found.slice(0, limit ?? found.length).map((call) => structuredClone(call));
    },
    async getRun(pid, run) {
      const found = runs.get(pid)?.[run - 1];
      return found && { ...found, outputs: [...found.outputs] };
    },
    async listRuns(pid, beforeRun, limit) {
      const found = (runs.get(pid) ?? []).filter((stored) => stored !== undefined && stored.run < beforeRun);
      return found
        .reverse()
        .slice(0, limit)
        .map(({ outputs: _outputs, stdout: _stdout, stderr: _stderr, ...run }) => ({ ...run }));
    },
    appendEvent(event, route) {
      events.push({ event, route });
      lastSeq = Math.max(lastSeq, event.seq);
      // Drop in chunks so trimming stays amortized O(1) per event.
      if (events.length > maxEvents + Math.ceil(maxEvents / 10))
        events = events.slice(events.length - maxEvents);
    },
    async eventsSince(since, filter: StoredEventFilter) {
      let start = lowerBound(events, since);
      const found: StoredEvent[] = [];
      let bytes = 0;
      for (; start < events.length; start++) {
        if (filter.maxBytes !== undefined && bytes >= filter.maxBytes) break;
        const stored = events[start]!;
        if (filter.through !== undefined && stored.event.seq > filter.through) break;
        const { route } = stored;
        if (filter.owner !== undefined && route.owner !== filter.owner) continue;
        if (filter.pid !== undefined && route.pid !== filter.pid) continue;
        if (filter.ref !== undefined && route.ref !== filter.ref) continue;
        found.push(stored);
        if (filter.maxBytes !== undefined) bytes += payloadBytes(stored.event);
      }
      return found;
    },
    async committed() {},
    health: () => ({ ok: true }),
    async close() {},
  };
}

/** Index of the first event with `seq > since` (events are in seq order). */
function lowerBound(events: StoredEvent[], since: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (events[middle]!.event.seq <= since) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** What the event's payload takes as the SQLite store keeps it: output JSON, log text or event JSON. */
function payloadBytes(event: ServerEvent): number {
  if (event.type === 'output') return JSON.stringify(event.value).length;
  if (event.type === 'log') return event.text.length;
  return JSON.stringify(event).length;
}
