import type {
  CallPage,
  Page,
  PageRequest,
  ProcessResult,
  ProcessSnapshot,
  RunSnapshot,
  RunSummary,
  ServerEvent,
} from '@mci/protocol';
import { fileNameProblem, type RunFile } from '@mci/sandbox';
import { callPage, callPageBounds } from '../audit/call-pages.ts';
import { pageBounds, toPage } from '../paging/cursor.ts';
import type { EventLog } from './event-log.ts';
import { normalizeRef } from './limits.ts';
import type { CallPageRequest, Principal, ProcessFilter, ReplayFilter } from './process-manager-types.ts';
import type { ProcessStore, StoredProcess } from './process-store.ts';
import type { LiveProcess } from './live-process.ts';
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
  async visible(pid: number, principal: Principal): Promise<StoredProcess> {
    const live = this.live(pid, principal);
    if (live) return live.record;
    // In a cluster another node may have changed or deleted the process since this node cached it.
    this.#store.cluster?.forget(pid);
    const record = Number.isSafeInteger(pid) ? await this.#store.getProcess(pid) : undefined;
    return this.#checkVisible(pid, record, principal);
  }

  /**
   * Process `pid` as it is now if it is live (not idle) and `principal` may see it; undefined when it
   * is not live here.
   * @throws ServerError `NOT_FOUND` (another principal's).
   */
  live(pid: number, principal: Principal): LiveProcess | undefined {
    const live = this.#live.get(pid);
    if (live) this.#checkVisible(pid, live.record, principal);
    return live;
  }

  #checkVisible(pid: number, record: StoredProcess | undefined, principal: Principal): StoredProcess {
    if (!record || (principal.role !== 'operator' && record.owner !== principal.id)) {
      throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    }
    return record;
  }

  /**
   * The snapshot of process `pid` if `principal` may see it.
   * @throws ServerError `NOT_FOUND`.
   */
  async get(pid: number, principal: Principal): Promise<ProcessSnapshot> {
    return this.#snapshotOf(await this.visible(pid, principal));
  }

  /**
   * The snapshot of process `pid` (no ownership check).
   * @throws ServerError `NOT_FOUND`.
   */
  async snapshot(pid: number): Promise<ProcessSnapshot> {
    const live = this.#live.get(pid);
    if (live) return toSnapshot(live.record, live.run);
    const record = await this.#store.getProcess(pid);
    if (!record) throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    return this.#snapshotOf(record);
  }

  /**
   * Run `run` of process `pid`, with its outputs and logs.
   * @throws ServerError `NOT_FOUND` (process not visible, or no such run).
   */
  async getRun(pid: number, run: number, principal: Principal): Promise<RunSnapshot> {
    await this.visible(pid, principal);
    const stored = Number.isSafeInteger(run) && run > 0 ? await this.#store.getRun(pid, run) : undefined;
    if (!stored) throw new ServerError('NOT_FOUND', `process ${pid} has no run ${run}`, { path: 'run' });
    return toRunSnapshot(stored);
  }

  /**
   * A page of the runs of process `pid`, newest (highest run number) first, without their outputs
   * and logs; the latest run of a live process as it is now. Visibility is checked first: another
   * principal's process is `NOT_FOUND` whatever the page.
   * @throws ServerError `NOT_FOUND` (process not visible), `VALIDATION` (bad cursor or limit).
   */
  async listRuns(pid: number, page: PageRequest, principal: Principal): Promise<Page<RunSummary>> {
    const record = await this.visible(pid, principal);
    const { limit, after } = pageBounds(page, ['number']);
    const before = after === undefined ? record.runs + 1 : (after[0] as number);
    const rows = await this.#store.listRuns(pid, before, limit + 1);
    const live = this.#live.get(pid)?.run;
    const runs = rows.map((row) => {
      const fields = live?.run === row.run ? live : row;
      const {
        outputs: _outputs,
        stdout: _stdout,
        stderr: _stderr,
        ...summary
      } = toRunSnapshot({
        ...fields,
        pid,
        outputs: [],
        stdout: '',
        stderr: '',
      });
      return summary;
    });
    return toPage(runs, limit, (run) => [run.run]);
  }

  /**
   * File `name` of run `run` of process `pid`. Visibility is checked first: another principal's
   * process is `NOT_FOUND` whatever the name.
   * @throws ServerError `NOT_FOUND` (process not visible, no such run or file), `VALIDATION` (a name
   * no file can have).
   */
  async getFile(pid: number, run: number, name: string, principal: Principal): Promise<RunFile> {
    await this.visible(pid, principal);
    const problem = fileNameProblem(name);
    if (problem) throw new ServerError('VALIDATION', `name: ${problem}`, { path: 'name' });
    const file = Number.isSafeInteger(run) && run > 0 ? await this.#store.getFile(pid, run, name) : undefined;
    if (!file)
      throw new ServerError('NOT_FOUND', `run ${run} of process ${pid} has no file ${JSON.stringify(name)}`, {
        path: 'name',
      });
    return file;
  }

  /**
   * A page of the calls of run `run` of process `pid`, by position. Visibility is checked first:
   * another principal's process is `NOT_FOUND` whatever the page.
   * @throws ServerError `NOT_FOUND` (process not visible, no such run), `VALIDATION` (bad cursor or limit).
   */
  async listCalls(pid: number, run: number, page: CallPageRequest, principal: Principal): Promise<CallPage> {
    const record = await this.visible(pid, principal);
    const { after, limit } = callPageBounds(page);
    if (!Number.isSafeInteger(run) || run < 1 || run > record.runs)
      throw new ServerError('NOT_FOUND', `process ${pid} has no run ${run}`, { path: 'run' });
    return callPage(pid, run, await this.#store.listCalls(pid, run, after, limit + 1), limit);
  }

  /**
   * The snapshot of process `pid` with its latest run's outputs and logs (empty if it never ran), if
   * `principal` may see it.
   * @throws ServerError `NOT_FOUND`.
   */
  async getResult(pid: number, principal: Principal): Promise<ProcessResult> {
    await this.visible(pid, principal);
    const result = await this.result(pid);
    if (!result) throw new ServerError('NOT_FOUND', `process ${pid} not found`, { path: 'pid' });
    return result;
  }

  /** The snapshot of process `pid` with its latest run's outputs and logs (no ownership check). */
  async result(pid: number): Promise<ProcessResult | undefined> {
    const record = await this.#store.getProcess(pid);
    if (!record) return undefined;
    const run = record.runs > 0 ? await this.#store.getRun(pid, record.runs) : undefined;
    return {
      ...toSnapshot(record, run),
      outputs: run?.outputs ?? [],
      stdout: run?.stdout ?? '',
      stderr: run?.stderr ?? '',
      ...(run?.truncated ? { truncated: true } : {}),
    };
  }

  /**
   * A page of the processes matching `filter` that `principal` may see, newest (highest pid) first,
   * keyset-paged by pid.
   * @throws ServerError `VALIDATION` for a bad `ref`, cursor or limit.
   */
  async list(filter: ProcessFilter & PageRequest, principal: Principal): Promise<Page<ProcessSnapshot>> {
    const { limit, after } = pageBounds(filter, ['number']);
    const ref = filter.ref === undefined ? undefined : normalizeRef(filter.ref);
    const records = await this.#store.listProcesses({
      ...(filter.state === undefined ? {} : { state: filter.state }),
      ...(filter.status === undefined ? {} : { status: filter.status }),
      ...(ref === undefined ? {} : { ref }),
      ...(filter.session === undefined ? {} : { session: filter.session }),
      ...(principal.role === 'operator' ? {} : { owner: principal.id }),
      ...(after === undefined ? {} : { beforePid: after[0] as number }),
      limit: limit + 1,
    });
    const page = toPage(records, limit, (record) => [record.pid]);
    return { ...page, items: await Promise.all(page.items.map((record) => this.#snapshotOf(record))) };
  }

  /**
   * Stored events with `seq > since` visible to `principal` and matching `filter`, in order.
   * @throws ServerError `VALIDATION` (bad `since` or `ref`, no filter given), `NOT_FOUND` (pid not visible).
   */
  async replay(since: number, filter: ReplayFilter, principal: Principal): Promise<ServerEvent[]> {
    if (!Number.isSafeInteger(since) || since < 0) {
      throw new ServerError('VALIDATION', 'since must be a non-negative integer', { path: 'since' });
    }
    if (filter.pid === undefined && filter.ref === undefined && !filter.all) {
      throw new ServerError('VALIDATION', 'give one of pid, ref or all', { path: 'pid' });
    }
    if (filter.pid !== undefined) await this.visible(filter.pid, principal);
    const ref = filter.ref === undefined ? undefined : normalizeRef(filter.ref);
    return this.#events.since(since, {
      ...(filter.pid === undefined ? {} : { pid: filter.pid }),
      ...(ref === undefined ? {} : { ref }),
      ...(filter.through === undefined ? {} : { through: filter.through }),
      ...(filter.maxBytes === undefined ? {} : { maxBytes: filter.maxBytes }),
      ...(principal.role === 'operator' ? {} : { owner: principal.id }),
    });
  }

  /** The snapshot of `record`, from the live process when it is not idle. */
  async #snapshotOf(record: StoredProcess): Promise<ProcessSnapshot> {
    const live = this.#live.get(record.pid);
    if (live) return toSnapshot(live.record, live.run);
    const run = record.runs > 0 ? await this.#store.getRun(record.pid, record.runs) : undefined;
    // The process may have become live while its run was read.
    const now = this.#live.get(record.pid);
    return now ? toSnapshot(now.record, now.run) : toSnapshot(record, run);
  }
}
