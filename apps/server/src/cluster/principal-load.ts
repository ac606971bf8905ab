import type { ProcessState } from '@mci/protocol';
import type { StoredEvent } from '../processes/process-store.ts';

/** A process of another node as this node last saw it. */
interface Remote {
  owner: string;
  state: 'queued' | 'running';
}

/** A process that is not idle, as the `processes` table holds it. */
export interface StoredLoad {
  pid: number;
  owner: string;
  state: ProcessState;
}

/**
 * Each principal's processes running and queued on the other nodes of a cluster, as this node knows
 * them: from the `process` events of the cluster's log (every node sees every event, in log order),
 * over a read of the `processes` table when the node starts.
 *
 * A process counts here while the last `process` event about it was committed by another node and it
 * is not live on this node: an event of this node about a pid drops it (this node counts its own
 * processes itself), and a process handed to this node but not yet run here is live here. The counts
 * lag the other nodes by the delivery of their events (a commit and a notification).
 */
export class PrincipalLoad {
  readonly #node: string;
  readonly #isLocal: (pid: number) => boolean;
  readonly #remote = new Map<number, Remote>();
  /** The pids of {@link PrincipalLoad.#remote} by owner, so a count reads only that owner's. */
  readonly #byOwner = new Map<string, Set<number>>();
  /** pids some event spoke of since {@link PrincipalLoad.seed} began reading (their event is newer). */
  #seen: Set<number> | undefined;

  /**
   * @param node this node's name.
   * @param isLocal whether process `pid` is live on this node (it counts there, not here).
   */
  constructor(node: string, isLocal: (pid: number) => boolean) {
    this.#node = node;
    this.#isLocal = isLocal;
  }

  /** Runs (running or terminating) of principal `owner` on the other nodes. */
  running(owner: string): number {
    return this.#count(owner, 'running');
  }

  /** Processes of principal `owner` waiting in the queues of the other nodes. */
  queued(owner: string): number {
    return this.#count(owner, 'queued');
  }

  /** Marks the start of a read of the `processes` table, whose rows {@link PrincipalLoad.seed} adds. */
  seeding(): void {
    this.#seen = new Set();
  }

  /** Adds the other nodes' processes read from the table, but those an event spoke of meanwhile. */
  seed(rows: StoredLoad[]): void {
    const seen = this.#seen ?? new Set<number>();
    this.#seen = undefined;
    for (const { pid, owner, state } of rows) if (!seen.has(pid)) this.#set(pid, owner, state);
  }

  /**
   * Takes in committed events (`nodes[i]`: the node that committed `events[i]`).
   * @returns whether a principal now has fewer runs elsewhere (a slot here may start its work).
   */
  see(events: StoredEvent[], nodes: string[]): boolean {
    let freed = false;
    events.forEach(({ event, route }, i) => {
      if (event.type !== 'process') return;
      this.#seen?.add(event.pid);
      const before = this.#remote.get(event.pid);
      if (nodes[i] === this.#node) this.#drop(event.pid);
      else this.#set(event.pid, route.owner, event.state);
      if (before?.state === 'running' && this.#remote.get(event.pid)?.state !== 'running') freed = true;
    });
    return freed;
  }

  #set(pid: number, owner: string, state: ProcessState): void {
    if (state !== 'queued' && state !== 'running' && state !== 'terminating') {
      this.#drop(pid);
      return;
    }
    this.#remote.set(pid, { owner, state: state === 'queued' ? 'queued' : 'running' });
    const pids = this.#byOwner.get(owner) ?? new Set<number>();
    pids.add(pid);
    this.#byOwner.set(owner, pids);
  }

  #drop(pid: number): void {
    const remote = this.#remote.get(pid);
    if (!remote) return;
    this.#remote.delete(pid);
    const pids = this.#byOwner.get(remote.owner);
    pids?.delete(pid);
    if (pids?.size === 0) this.#byOwner.delete(remote.owner);
  }

  #count(owner: string, state: Remote['state']): number {
    let count = 0;
    for (const pid of this.#byOwner.get(owner) ?? [])
      if (this.#remote.get(pid)?.state === state && !this.#isLocal(pid)) count++;
    return count;
  }
}
