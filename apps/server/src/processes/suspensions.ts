import type { Approval, ProcessState, ProcessStatus } from '@mci/protocol';
import type { ToolHost } from '@mci/sandbox';
import type { Logger } from 'pino';
import type { Approvals } from '../approvals/approvals.ts';
import { GatedTools } from '../approvals/gated-tools.ts';
import type { UnsequencedEvent } from './event-log.ts';
import type { EventListener, Principal } from './process-manager-types.ts';
import { liveProcessOf } from './process-recovery.ts';
import type { EventRoute, ProcessStore, StoredProcess } from './process-store.ts';
import type { LiveProcess } from './live-process.ts';
import type { RunController } from './run-controller.ts';
import { routeOf, wireRoute } from './run-output.ts';

/** What {@link Suspensions} may do with the process manager. */
export interface SuspensionHost {
  readonly store: ProcessStore;
  readonly runs: RunController;
  readonly logger: Logger | undefined;
  /** Bytes of JSON of a call's input and result its record keeps (`limits.auditValueBytes`). */
  readonly auditValueBytes: number | undefined;
  /** Makes `live` one of the manager's live processes (counted as `from`). */
  enter(live: LiveProcess): void;
  enqueue(live: LiveProcess): void;
  transition(live: LiveProcess, from: { state: ProcessState; status: ProcessStatus }): void;
  /** The record of live process `pid`, if it is live here. */
  liveRecord(pid: number): StoredProcess | undefined;
  emit(event: UnsequencedEvent, route: EventRoute): void;
  onEvent(listener: EventListener): () => void;
}

/**
 * The suspended processes of a manager (docs/approvals.md): a run whose call needs an approval stops,
 * its approval, call log and delivered counts are stored, and the process goes `suspended`, holding no
 * sandbox slot and no memory here (it lives in the store, so a restart or another cluster node can
 * resume it). Resuming queues the same run again; the run replays its program from the start with
 * the call log.
 */
export class Suspensions {
  readonly #approvals: Approvals;
  readonly #host: SuspensionHost;
  /** Callers waiting for a suspended process to become idle, by pid. */
  readonly #waiters = new Map<number, Array<() => void>>();

  constructor(approvals: Approvals, host: SuspensionHost) {
    this.#approvals = approvals;
    this.#host = host;
  }

  /**
   * The tools run `live` sees: policy-checked, each call recorded in the store (the audit), the
   * records replayed when it resumes.
   */
  toolsFor(live: LiveProcess, tools: ToolHost | undefined): GatedTools {
    const { pid } = live.record;
    const { run } = live.run;
    const gated: GatedTools = new GatedTools(
      tools,
      {
        decide: (tool) => this.#approvals.decisionFor(tool),
        describe: (name) => this.#approvals.describe(name),
        decideFetch: (url, method) => this.#approvals.decisionForFetch(url, method),
        credentials: this.#approvals.credentials,
        redactor: this.#approvals.redactor,
        ask: (call) => {
          // The calls in flight settle (and are logged) first, so none acts twice after the resume.
          void gated.settled().then(() => {
            live.asked = call;
            live.cutCalls = gated.cutRecords();
            live.execution?.kill();
          });
        },
        diverged: (error) => {
          live.diverged ??= error;
          live.execution?.kill();
        },
        record: (call) => this.#host.store.putCall(pid, run, call),
        auditValueBytes: this.#host.auditValueBytes,
      },
      live.replay,
    );
    return gated;
  }

  /**
   * A run that asked has stopped: store the whole results of its cut records and, once its calls are
   * committed, its approval; then suspend it (or end it, killed meanwhile).
   */
  suspend(live: LiveProcess): void {
    const { record, run } = live;
    const received = live.received ?? { outputs: 0, stdout: 0, stderr: 0 };
    const before = live.replay?.delivered ?? { outputs: 0, stdout: 0, stderr: 0, tools: 0 };
    const delivered = {
      outputs: Math.max(before.outputs, received.outputs),
      stdout: Math.max(before.stdout, received.stdout),
      stderr: Math.max(before.stderr, received.stderr),
      tools: Math.max(before.tools, live.toolEvents ?? 0),
      files: Math.max(before.files ?? 0, live.files?.size ?? 0),
    };
    const asked = live.asked!;
    const { store } = this.#host;
    for (const call of live.cutCalls ?? []) store.putCall(record.pid, run.run, call);
    store
      .committed()
      .then(() =>
        this.#approvals.request({ pid: record.pid, run: run.run, owner: record.owner }, asked, delivered),
      )
      .then(
        async (approval) => {
          if (!live.killRequested) {
            this.#host.runs.suspend(live, [approval.id]);
            await this.#approvals.announce(approval);
            return;
          }
          const canceled = await this.#approvals.store.cancelPending(record.pid, undefined);
          this.#host.runs.endSuspended(live, 'canceled');
          for (const each of canceled) await this.#approvals.announce(each);
        },
        (error: unknown) => {
          this.#host.logger?.error({ err: error, pid: record.pid }, 'the approval could not be stored');
          this.#host.runs.endSuspended(live, 'failed', {
            name: 'Error',
            message: `the approval for ${asked.kind === 'tool' ? asked.tool : `fetch ${asked.url}`} could not be stored: ${String((error as Error)?.message ?? error)}`,
          });
        },
      );
  }

  /** `live` went suspended: its waiters wait on (it is no longer live here). */
  park(live: LiveProcess): void {
    const waiters = live.waiters.splice(0);
    if (waiters.length > 0)
      this.#waiters.set(live.record.pid, [...(this.#waiters.get(live.record.pid) ?? []), ...waiters]);
  }

  /** Resolves once suspended process `pid` has become idle on this node (resumed here or killed). */
  waitIdle(pid: number): Promise<void> {
    return new Promise((resolve) => this.#waiters.set(pid, [...(this.#waiters.get(pid) ?? []), resolve]));
  }

  /**
   * Queues the suspended run of process `pid` again (its approval was decided): it replays its call
   * log. Does nothing when the process is no longer suspended.
   */
  async resume(pid: number): Promise<void> {
    const { store } = this.#host;
    store.cluster?.forget(pid);
    const record = await store.getProcess(pid);
    if (record?.state !== 'suspended') return;
    const run = await store.getRun(pid, record.runs);
    const replay = {
      ...(await this.#approvals.replayOf(pid, record.runs)),
      calls: await store.listCalls(pid, record.runs, -1),
    };
    // The run may have begun on another node: its outputs from here on must sort after those.
    await store.cluster?.renewEventIds();
    const live = this.#revive(record, run);
    live.replay = replay;
    const from = { state: record.state, status: record.status };
    record.state = live.run.state = 'queued';
    store.updateRun(pid, live.run.run, { state: 'queued', status: null });
    this.#host.transition(live, from);
    this.#host.enqueue(live);
  }

  /**
   * Kills suspended process `record`: its pending approval is canceled and it ends idle/canceled.
   * @returns false when it was no longer suspended (an approval was decided first: kill it live).
   */
  async kill(record: StoredProcess, principal: Principal): Promise<boolean> {
    const canceled = await this.#approvals.store.cancelPending(record.pid, principal.id);
    if (canceled.length === 0) return false;
    const live = this.#revive(record, await this.#host.store.getRun(record.pid, record.runs));
    this.#host.runs.endSuspended(live, 'canceled');
    for (const approval of canceled) await this.#approvals.announce(approval);
    return true;
  }

  /** Sends the `approval` event of `approval` to those who see its process. */
  async announce(approval: Approval): Promise<void> {
    const { store } = this.#host;
    store.cluster?.forget(approval.pid);
    const record = this.#host.liveRecord(approval.pid) ?? (await store.getProcess(approval.pid));
    const route = record ? routeOf(record) : { owner: approval.principal, pid: approval.pid };
    this.#host.emit(
      { type: 'approval', pid: approval.pid, run: approval.run, ...wireRoute(route), approval },
      route,
    );
  }

  /**
   * A run of process `pid` was interrupted (its server stopped): an approval it was asking for (stored
   * before the process could be suspended) is canceled.
   */
  interrupted(pid: number): void {
    void this.#approvals.store.cancelPending(pid, undefined).then(
      (canceled) => Promise.all(canceled.map((approval) => this.#approvals.announce(approval))),
      (error: unknown) => this.#host.logger?.warn({ err: error, pid }, 'approvals of an interrupted run'),
    );
  }

  /** Resolves at the `idle` event of suspended process `pid` (at once, when it is idle already). */
  async idle(pid: number): Promise<void> {
    let stop = () => {};
    const idle = new Promise<void>((resolve) => {
      stop = this.#host.onEvent((event) => {
        if (event.type === 'process' && event.pid === pid && event.state === 'idle') resolve();
      });
    });
    try {
      this.#host.store.cluster?.forget(pid);
      const now = await this.#host.store.getProcess(pid);
      if (now && now.state !== 'idle') await idle;
    } finally {
      stop();
    }
  }

  /** The pending approvals of a suspended process (its snapshot lists them). */
  pendingOf(pid: number): Promise<string[]> {
    return this.#approvals.store.pendingOf(pid);
  }

  /** Makes a stored suspended process live here, with the waiters that waited for it. */
  #revive(record: StoredProcess, run: Parameters<typeof liveProcessOf>[1]): LiveProcess {
    const live = liveProcessOf(record, run);
    live.waiters.push(...(this.#waiters.get(record.pid) ?? []));
    this.#waiters.delete(record.pid);
    this.#host.enter(live);
    return live;
  }
}
