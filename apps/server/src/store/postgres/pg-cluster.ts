import type { ClusterHandlers, ClusterStore } from '../../processes/process-store.ts';
import { StoreError } from '../store-error.ts';
import type { PgBridge } from './pg-bridge.ts';
import { leaseCheck } from './pg-node-lease.ts';
import type { ClusterMessage, PgStatement } from './pg-protocol.ts';
import { decodePgEvents } from './pg-reads.ts';

/** A row of the `nodes` table, as the Postgres store's `nodes()` reads it. */
export interface ClusterNode {
  name: string;
  /** ISO 8601, by the database clock. */
  startedAt: string;
  renewedAt: string;
  leaseUntil: string;
  /** When the lease was released (a clean stop) or ended after it expired; absent while held. */
  stoppedAt?: string;
  /** The node that ended the lease: the node itself for a clean stop. */
  stoppedBy?: string;
  /** Whether the lease is held and not expired. */
  live: boolean;
}

/** pids and event ids are reserved from the shared counters in blocks (one round trip per block). */
const PID_BLOCK = 32;
const EVENT_ID_BLOCK = 1024;

/** The longest node name: `mci_node:NAME` must fit PostgreSQL's 63-byte channel names. */
export const MAX_NODE_NAME_BYTES = 50;

/** The store's side of the cluster link: sending its batch, reading, and dropping cached records. */
export interface ClusterStoreHooks {
  flush(): void;
  /** Adds a statement (`?` placeholders) to the store's write batch. */
  write(sql: string, params: Array<string | number>): void;
  read(sql: string, params: Array<string | number>): Promise<Array<Record<string, unknown>>>;
  forget(pid: number): void;
}

/**
 * Ids reserved from the shared counter `name` in blocks (one `UPDATE ... RETURNING` each; the row
 * lock makes the blocks of several nodes disjoint). The next block is reserved in the background
 * once half of the current one is used, so taking an id never waits for the database.
 */
class IdBlock {
  readonly #bridge: PgBridge;
  readonly #name: 'pid' | 'seq';
  readonly #size: number;
  #next = 1;
  #last = 0;
  /** The first id of a block reserved ahead, once its reservation has answered. */
  #ahead: number | undefined;
  #reserving: Promise<void> | undefined;

  constructor(bridge: PgBridge, name: 'pid' | 'seq', size: number) {
    this.#bridge = bridge;
    this.#name = name;
    this.#size = size;
  }

  /** Reserves the first block (before the first id is taken). @throws StoreError `STORE_UNAVAILABLE`. */
  async start(): Promise<void> {
    await this.#reserve();
    this.#switch();
  }

  /** @throws StoreError `STORE_UNAVAILABLE` when no reserved id is left (the database is away). */
  take(): number {
    if (this.#next > this.#last) this.#switch();
    if (this.#next > this.#last)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.#bridge.url,
        `no ${this.#name} is reserved: the process database ${this.#bridge.url} did not answer in time`,
      );
    if (this.#last - this.#next < this.#size / 2 && this.#ahead === undefined) void this.#reserve().catch(() => {});
    return this.#next++;
  }

  #switch(): void {
    if (this.#ahead === undefined) return;
    this.#next = this.#ahead;
    this.#last = this.#ahead + this.#size - 1;
    this.#ahead = undefined;
  }

  #reserve(): Promise<void> {
    this.#reserving ??= this.#bridge
      .query('UPDATE counters SET value = value + $1 WHERE name = $2 RETURNING value', [this.#size, this.#name])
      .then((rows) => {
        this.#ahead = Number(rows[0]?.value) - this.#size + 1;
      })
      .finally(() => {
        this.#reserving = undefined;
      });
    return this.#reserving;
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
  readonly #hooks: ClusterStoreHooks;
  readonly #pids: IdBlock;
  readonly #eventIds: IdBlock;
  /** Set by {@link PgCluster.attach}; messages before it are dropped (the manager's recovery reads them). */
  #handlers: ClusterHandlers | undefined;
  /** Processes queued on the other nodes, as of the last renewal of the lease. */
  #queuedElsewhere = 0;
  /** Ids of the events in the write batch being collected, in order. */
  #batchEvents: number[] = [];

  constructor(bridge: PgBridge, node: string, hooks: ClusterStoreHooks) {
    this.node = node;
    this.#bridge = bridge;
    this.#hooks = hooks;
    this.#pids = new IdBlock(bridge, 'pid', PID_BLOCK);
    this.#eventIds = new IdBlock(bridge, 'seq', EVENT_ID_BLOCK);
  }

  /** Reserves the first blocks of pids and event ids. @throws StoreError `STORE_UNAVAILABLE`. */
  async start(): Promise<void> {
    await Promise.all([this.#pids.start(), this.#eventIds.start()]);
  }

  nextPid(): number {
    return this.#pids.take();
  }

  nextEventId(): number {
    return this.#eventIds.take();
  }

  async nodeOf(pid: number): Promise<string | undefined> {
    const row = (await this.#hooks.read("SELECT node FROM processes WHERE pid = ? AND state <> 'idle'", [pid]))[0];
    return typeof row?.node === 'string' ? row.node : undefined;
  }

  async claimRun(pid: number, runs: number): Promise<boolean> {
    const claimed = await this.#hooks.read(
      `UPDATE processes SET state = 'queued', status = NULL, runs = runs + 1, node = ?
        WHERE pid = ? AND state = 'idle' AND runs = ?
          AND EXISTS (SELECT 1 FROM nodes WHERE name = ? AND stopped_at IS NULL)
        RETURNING pid`,
      [this.node, pid, runs, this.node],
    );
    return claimed.length === 1;
  }

  sendKill(node: string, pid: number): void {
    this.#notify(`mci_node:${node}`, `kill ${pid}`);
  }

  queuedElsewhere(): number {
    return this.#queuedElsewhere;
  }

  async liveNodes(): Promise<string[]> {
    const rows = await this.#hooks.read(
      'SELECT name FROM nodes WHERE stopped_at IS NULL AND lease_until >= now() AND name <> ? ORDER BY name',
      [this.node],
    );
    return rows.map((row) => String(row.name));
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

  async attach(handlers: ClusterHandlers): Promise<{ lastSeq: number }> {
    this.#handlers = handlers;
    return { lastSeq: await this.#bridge.listen(this.node) };
  }

  /** A message of the worker for this node (see {@link ClusterMessage}). */
  receive(message: ClusterMessage): void {
    if (message.type === 'queuedElsewhere') {
      this.#queuedElsewhere = message.count;
      return;
    }
    const handlers = this.#handlers;
    if (!handlers) return;
    switch (message.type) {
      case 'events':
        for (const row of message.rows)
          if (row.node !== this.node && typeof row.pid === 'number') this.#hooks.forget(row.pid);
        handlers.events(decodePgEvents(message.rows));
        break;
      case 'adopted':
        for (const [pid] of message.adopted) this.#hooks.forget(pid);
        handlers.adopted(message.adopted.map(([pid, node]) => ({ pid, node })));
        break;
      case 'take':
        for (const pid of message.pids) this.#hooks.forget(pid);
        handlers.take(message.pids);
        break;
      case 'kill':
        handlers.kill(message.pid);
        break;
      case 'surplus':
        handlers.surplus(message.node);
        break;
      case 'offer':
        handlers.offer(message.node, message.slots);
        break;
    }
  }

  /** Event `id` was written in the batch being collected. */
  noteEvent(id: number): void {
    this.#batchEvents.push(id);
  }

  /**
   * Completes a batch of this node's writes: it commits only while the node's lease holds, and its
   * events get their positions in the shared log.
   */
  finishBatch(statements: PgStatement[]): void {
    statements.unshift(leaseCheck(this.node));
    if (this.#batchEvents.length === 0) return;
    statements.push(...positionStatements(this.#batchEvents, this.node));
    this.#batchEvents = [];
  }

  /** Forgets the events of writes that were dropped (see the store's `fence`). */
  dropBatch(): void {
    this.#batchEvents = [];
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

/**
 * The last statements of a cluster's batch: positions in the shared event log for the batch's events
 * (`ids`, in order), then a notification to every node. The counter row stays locked until the commit,
 * so positions are handed out in commit order: a node that has read position N has seen every event
 * before it. Ids that already have a position are skipped, so a batch retried after its commit was
 * lost with its connection positions nothing twice.
 */
function positionStatements(ids: number[], node: string): PgStatement[] {
  return [
    {
      sql: `WITH fresh AS (
              SELECT t.seq, row_number() OVER (ORDER BY t.ord) AS ord
                FROM unnest($2::bigint[]) WITH ORDINALITY AS t(seq, ord)
               WHERE NOT EXISTS (SELECT 1 FROM event_log g WHERE g.seq = t.seq)
            ), base AS (
              UPDATE counters SET value = value + (SELECT count(*) FROM fresh) WHERE name = 'pos'
              RETURNING value - (SELECT count(*) FROM fresh) AS first
            )
            INSERT INTO event_log (pos, seq, node)
              SELECT base.first + fresh.ord, fresh.seq, $1 FROM base, fresh`,
      params: [node, `{${ids.join(',')}}`],
    },
    { sql: "SELECT pg_notify('mci_events', '')", params: [] },
  ];
}
