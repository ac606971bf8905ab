import type { ProcessResult, ProcessSnapshot, RunSnapshot, ServerEvent } from '@mci/protocol';
import type { EventLog } from './event-log.ts';
import { normalizeRef } from './limits.ts';
import type { Principal, ProcessFilter, ReplayFilter } from './process-manager-types.ts';
import type { ProcessStore, StoredProcess } from './process-store.ts';
import type { LiveProcess } from './run-controller.ts';
import { ServerError } from './server-error.ts';
import { toRunSnapshot, toSnapshot } from './snapshots.ts';

/**
 * Reads processes and their events as principals see them: a client sees only its own, an operator
 * sees all. A live (not idle) process is read from its in-memory state, any other from the store
 * (in a cluster, from the database).
 */
export class ProcessReader {
  readonly #store: ProcessStore;
  readonly #live: ReadonlyMap<number, LiveProcess>;
  readonly #events: EventLog;

  constructor(store: ProcessStore, live: ReadonlyMap<number, LiveProcess>, events: EventLog) {
    this.#store = store;
    this.#live = live;
    this.#events = events;
  }

  /**
   * The record of process `pid` if `principal` may see it.
   * @throws ServerError `NOT_FOUND` (no such process, or not the principal's).
   */
  visible(pid: number, principal: Principal): StoredProcess {
    const live = this.#live.get(pid);
    // In a cluster another node may have changed or deleted the process since this node cached it.
    if (!live) this.#store.cluster?.forget(pid);
    const record = live?.record ?? (Number.isSafeInteger(pid) ? this.#store.getProcess(pid) : undefined);
    if (!record || (principal.role !== 'operator' && record.owner !== principal.id)) {
      throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    }
    return record;
  }

  /**
   * The snapshot of process `pid` if `principal` may see it.
   * @throws ServerError `NOT_FOUND`.
   */
  get(pid: number, principal: Principal): ProcessSnapshot {
    this.visible(pid, principal);
    return this.snapshot(pid);
  }

  /**
   * The snapshot of process `pid` (no ownership check).
   * @throws ServerError `NOT_FOUND`.
   */
  snapshot(pid: number): ProcessSnapshot {
    const live = this.#live.get(pid);
    if (live) return toSnapshot(live.record, live.run);
    const record = this.#store.getProcess(pid);
    if (!record) throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    return this.#snapshotOf(record);
  }

  /**
   * Run `run` of process `pid`, with its outputs and logs.
   * @throws ServerError `NOT_FOUND` (process not visible, or no such run).
   */
  getRun(pid: number, run: number, principal: Principal): RunSnapshot {
    this.visible(pid, principal);
    const stored = Number.isSafeInteger(run) && run > 0 ? this.#store.getRun(pid, run) : undefined;
    if (!stored) throw new ServerError('NOT_FOUND', `process ${pid} has no run ${run}`, { path: 'run' });
    return toRunSnapshot(stored);
  }

  /**
   * The snapshot of process `pid` with its latest run's outputs and logs (empty if it never ran), if
   * `principal` may see it.
   * @throws ServerError `NOT_FOUND`.
   */
  getResult(pid: number, principal: Principal): ProcessResult {
    this.visible(pid, principal);
    return this.result(pid)!;
  }

  /** The snapshot of process `pid` with its latest run's outputs and logs (no ownership check). */
  result(pid: number): ProcessResult | undefined {
    const record = this.#store.getProcess(pid);
    if (!record) return undefined;
    const run = record.runs > 0 ? this.#store.getRun(pid, record.runs) : undefined;
    return {
      ...toSnapshot(record, run),
      outputs: run?.outputs ?? [],
      stdout: run?.stdout ?? '',
      stderr: run?.stderr ?? '',
      ...(run?.truncated ? { truncated: true } : {}),
    };
  }

  /**
   * The processes matching `filter` that `principal` may see, newest first.
   * @throws ServerError `VALIDATION` for a bad `ref`.
   */
  list(filter: ProcessFilter, principal: Principal): ProcessSnapshot[] {
    const ref = filter.ref === undefined ? undefined : normalizeRef(filter.ref);
    return this.#store
      .listProcesses({
        ...(filter.state === undefined ? {} : { state: filter.state }),
        ...(filter.status === undefined ? {} : { status: filter.status }),
        ...(ref === undefined ? {} : { ref }),
        ...(principal.role === 'operator' ? {} : { owner: principal.id }),
      })
      .map((record) => this.#snapshotOf(record));
  }

  /**
   * Stored events with `seq > since` visible to `principal` and matching `filter`, in order.
   * @throws ServerError `VALIDATION` (bad `since` or `ref`, no filter given), `NOT_FOUND` (pid not visible).
   */
  replay(since: number, filter: ReplayFilter, principal: Principal): ServerEvent[] {
    if (!Number.isSafeInteger(since) || since < 0) {
      throw new ServerError('VALIDATION', 'since must be a non-negative integer', { path: 'since' });
    }
    if (filter.pid === undefined && filter.ref === undefined && !filter.all) {
      throw new ServerError('VALIDATION', 'give one of pid, ref or all', { path: 'pid' });
    }
    if (filter.pid !== undefined) this.visible(filter.pid, principal);
    const ref = filter.ref === undefined ? undefined : normalizeRef(filter.ref);
    return this.#events.since(since, {
      ...(filter.pid === undefined ? {} : { pid: filter.pid }),
      ...(ref === undefined ? {} : { ref }),
      ...(filter.through === undefined ? {} : { through: filter.through }),
      ...(filter.maxBytes === undefined ? {} : { maxBytes: filter.maxBytes }),
      ...(principal.role === 'operator' ? {} : { owner: principal.id }),
    });
  }

  #snapshotOf(record: StoredProcess): ProcessSnapshot {
    const live = this.#live.get(record.pid);
    if (live) return toSnapshot(live.record, live.run);
    return toSnapshot(record, record.runs > 0 ? this.#store.getRun(record.pid, record.runs) : undefined);
  }
}
