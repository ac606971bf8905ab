import type { ClusterHandlers, ClusterStore } from '../../processes/process-store.ts';
import type { PgBridge } from './pg-bridge.ts';
import { decodePgEvents } from './pg-reads.ts';

/** pids and event ids are reserved from the shared counters in blocks (one round trip per block). */
const PID_BLOCK = 32;
const EVENT_ID_BLOCK = 1024;

/** The longest node name: `mci_node:NAME` must fit PostgreSQL's 63-byte channel names. */
export const MAX_NODE_NAME_BYTES = 50;

/**
 * What the worker reports for a cluster, relayed to the handlers once {@link PgCluster.attach} set
 * them (the bridge exists before the store).
 */
export interface ClusterRelay {
  events?(rows: Array<Record<string, unknown>>): void;
  kill?(pid: number): void;
  adopted?(adopted: Array<[number, string]>): void;
  surplus?(node: string): void;
  offer?(node: string, slots: number): void;
  take?(pids: number[]): void;
  /** Processes queued on the other nodes, as of the last renewal of the lease. */
  queuedElsewhere?: number;
}

/** The store's side of the cluster link: flushing its batch, reading, and dropping cached records. */
export interface ClusterStoreHooks {
  flush(): void;
  /** Adds a statement (`?` placeholders) to the store's write batch. */
  write(sql: string, params: Array<string | number>): void;
  read(sql: string, params: Array<string | number>): Array<Record<string, unknown>>;
  forget(pid: number): void;
}

/** A block of ids reserved with one `UPDATE ... RETURNING` on the shared counter `name`. */
class IdBlock {
  readonly #bridge: PgBridge;
  readonly #name: 'pid' | 'seq';
  readonly #size: number;
  #next = 1;
  #last = 0;

  constructor(bridge: PgBridge, name: 'pid' | 'seq', size: number) {
    this.#bridge = bridge;
    this.#name = name;
    this.#size = size;
  }

  take(): number {
    if (this.#next > this.#last) {
      // The row lock makes concurrent reservations of several nodes disjoint.
      const row = this.#bridge.query(
        'UPDATE counters SET value = value + $1 WHERE name = $2 RETURNING value',
        [this.#size, this.#name],
      )[0];
      this.#last = Number(row?.value);
      this.#next = this.#last - this.#size + 1;
    }
    return this.#next++;
  }
}

/**
 * The Postgres store's {@link ClusterStore}: pids and event ids from shared counters (in blocks),
 * committed events and kill requests from the worker's `LISTEN` connection, processes of expired
 * nodes from the lease's sweep.
 */
export class PgCluster implements ClusterStore {
  readonly node: string;
  readonly #bridge: PgBridge;
  readonly #relay: ClusterRelay;
  readonly #hooks: ClusterStoreHooks;
  readonly #pids: IdBlock;
  readonly #eventIds: IdBlock;

  constructor(bridge: PgBridge, node: string, relay: ClusterRelay, hooks: ClusterStoreHooks) {
    this.node = node;
    this.#bridge = bridge;
    this.#relay = relay;
    this.#hooks = hooks;
    this.#pids = new IdBlock(bridge, 'pid', PID_BLOCK);
    this.#eventIds = new IdBlock(bridge, 'seq', EVENT_ID_BLOCK);
  }

  nextPid(): number {
    return this.#pids.take();
  }

  nextEventId(): number {
    return this.#eventIds.take();
  }

  nodeOf(pid: number): string | undefined {
    const row = this.#hooks.read("SELECT node FROM processes WHERE pid = ? AND state <> 'idle'", [pid])[0];
    return typeof row?.node === 'string' ? row.node : undefined;
  }

  sendKill(node: string, pid: number): void {
    this.#notify(`mci_node:${node}`, `kill ${pid}`);
  }

  queuedElsewhere(): number {
    return this.#relay.queuedElsewhere ?? 0;
  }

  liveNodes(): string[] {
    return this.#hooks
      .read(
        'SELECT name FROM nodes WHERE stopped_at IS NULL AND lease_until >= now() AND name <> ? ORDER BY name',
        [this.node],
      )
      .map((row) => String(row.name));
  }

  announceSurplus(): void {
    this.#notify('mci_surplus', this.node);
  }

  sendOffer(node: string, slots: number): void {
    this.#notify(`mci_node:${node}`, `offer ${this.node} ${slots}`);
  }

  handOver(node: string, pids: number[]): void {
    // In the write batch: the other node reads the processes once this node's writes are committed.
    const list = `{${pids.join(',')}}`;
    this.#hooks.write('UPDATE processes SET node = ? WHERE pid = ANY(?::bigint[])', [node, list]);
    this.#hooks.write('SELECT pg_notify(?, ?)', [`mci_node:${node}`, `take ${pids.join(',')}`]);
    for (const pid of pids) this.#hooks.forget(pid);
    this.#hooks.flush();
  }

  attach(handlers: ClusterHandlers): { lastSeq: number } {
    this.#relay.events = (rows) => {
      for (const row of rows) {
        if (row.node !== this.node && typeof row.pid === 'number') this.#hooks.forget(row.pid);
      }
      handlers.events(decodePgEvents(rows));
    };
    this.#relay.kill = (pid) => handlers.kill(pid);
    this.#relay.surplus = (node) => handlers.surplus(node);
    this.#relay.offer = (node, slots) => handlers.offer(node, slots);
    this.#relay.take = (pids) => {
      for (const pid of pids) this.#hooks.forget(pid);
      handlers.take(pids);
    };
    this.#relay.adopted = (adopted) => {
      for (const [pid] of adopted) this.#hooks.forget(pid);
      handlers.adopted(adopted.map(([pid, node]) => ({ pid, node })));
    };
    return { lastSeq: this.#bridge.listen(this.node) };
  }

  forget(pid: number): void {
    this.#hooks.forget(pid);
  }

  /** Sends a notification after this node's pending writes. */
  #notify(channel: string, payload: string): void {
    this.#hooks.flush();
    this.#bridge.post([{ sql: 'SELECT pg_notify($1, $2)', params: [channel, payload] }]);
  }
}
