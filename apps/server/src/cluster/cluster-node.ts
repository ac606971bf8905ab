import type { ProcessState } from '@mci/protocol';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { ClusterHandlers, ClusterStore } from '../processes/process-store.ts';
import type { Engine } from '../store/sql/engine.ts';
import type { Database } from '../store/sql/tables.ts';
import type { WriteSet, WriteSetNode } from '../store/sql/write-set.ts';
import { ClusterQuotaLedger } from './cluster-quota-ledger.ts';
import { IdBlock } from './id-block.ts';
import { NodeBus, nodeChannel } from './node-bus.ts';
import { NodeLease } from './node-lease.ts';

/** pids and event ids are reserved from the shared counters in blocks (one round trip per block). */
const PID_BLOCK = 32;
const EVENT_ID_BLOCK = 1024;

/** The longest node name: `mci_node:NAME` must fit PostgreSQL's 63-byte channel names. */
export const MAX_NODE_NAME_BYTES = 50;

/** What a cluster node needs of the process store it shares the database through. */
export interface ClusterStoreLink {
  /** Adds writes to the store's batch being filled. */
  write(add: (set: WriteSet) => void): void;
  /** Starts committing the pending writes. */
  flush(): void;
  /** Resolves once the writes so far are committed (bounded; see `ProcessStore.committed`). */
  committed(): Promise<void>;
  /** Drops the store's cached record of `pid` (another node changed it). */
  forget(pid: number): void;
}

/** Settings of {@link ClusterNode}. */
export interface ClusterNodeOptions {
  url: string;
  pool: pg.Pool;
  db: Kysely<Database>;
  engine: Engine;
  name: string;
  /** How long (ms) a lease lasts without renewal, and how often it is renewed. */
  leaseMs: number;
  renewMs: number;
  connectMs: number;
  /**
   * This node ended the leases of `names` (maybe none), which expired without being released, and
   * took over `adopted` processes of those and of stopped nodes.
   */
  onExpired?: (names: string[], adopted: number) => void;
  /** Another node ended this node's lease: its writes are refused from now on. */
  onLost?: (name: string) => void;
}

/**
 * A server's part in a cluster on one PostgreSQL database ({@link ClusterStore}): pids and event ids
 * from shared counters, its lease (renewed, and the expired leases of others ended, their processes
 * taken over), the bus that brings committed events and requests, and what every write batch of the
 * node adds: the lease check first (a fenced node writes nothing) and the events' log positions last.
 * See docs/cluster.md.
 */
export class ClusterNode implements ClusterStore {
  readonly node: string;
  readonly #options: ClusterNodeOptions;
  readonly #pids: IdBlock;
  readonly #eventIds: IdBlock;
  readonly #lease: NodeLease;
  #bus: NodeBus | undefined;
  #store: ClusterStoreLink | undefined;
  #handlers: ClusterHandlers | undefined;
  #queuedElsewhere = 0;

  /** Runs and CPU ms per principal and minute, counted in the `quota_windows` table. */
  readonly quotas: ClusterQuotaLedger;

  /** What each write batch of this node adds (see {@link WriteSetNode}). */
  readonly writes: WriteSetNode;

  constructor(options: ClusterNodeOptions) {
    this.node = options.name;
    this.#options = options;
    const { pool, url, name } = options;
    this.#pids = new IdBlock(pool, 'pid', PID_BLOCK, url);
    this.#eventIds = new IdBlock(pool, 'seq', EVENT_ID_BLOCK, url);
    this.quotas = new ClusterQuotaLedger(pool);
    this.#lease = new NodeLease(pool, name, options.leaseMs, {
      queuedElsewhere: (count) => {
        this.#queuedElsewhere = count;
      },
      expired: (names, adopted) => {
        for (const [pid] of adopted) this.#store?.forget(pid);
        if (adopted.length > 0) this.#handlers?.adopted(adopted.map(([pid, node]) => ({ pid, node })));
        options.onExpired?.(names, adopted.length);
      },
      lost: () => options.onLost?.(name),
    });
    this.writes = {
      name,
      // The lease row stays share-locked to the commit: a lease ended by another node lets no write through.
      before: sql`SELECT mci_check_lease(${name})`.compile(options.db),
      after: (seqs: number[]) => positionEvents(options.db, name, seqs),
    };
  }

  /**
   * Takes the node's lease and reserves the first ids.
   * @returns false when a live node holds a lease under this name.
   */
  async start(): Promise<boolean> {
    if (!(await this.#lease.acquire(this.#options.renewMs))) return false;
    await Promise.all([this.#pids.start(), this.#eventIds.start()]);
    return true;
  }

  /** Links the store whose batches carry this node's writes. */
  link(store: ClusterStoreLink): void {
    this.#store = store;
  }

  nextPid(): number {
    return this.#pids.take();
  }

  pidAvailable(): boolean {
    return this.#pids.available();
  }

  async renewEventIds(): Promise<void> {
    await this.#eventIds.renew();
  }

  pidReady(): Promise<void> {
    return this.#pids.ready();
  }

  nextEventId(): number {
    return this.#eventIds.take();
  }

  async nodeOf(pid: number): Promise<string | undefined> {
    await this.#store?.committed();
    const row = await this.#options.db
      .selectFrom('processes')
      .select('node')
      .where('pid', '=', pid)
      .where('state', 'not in', ['idle', 'suspended'])
      .executeTakeFirst();
    return row?.node ?? undefined;
  }

  async claimRun(pid: number, runs: number): Promise<boolean> {
    await this.#store?.committed();
    const claimed = await this.#options.db
      .updateTable('processes')
      .set({ state: 'queued', status: null, runs: sql`runs + 1`, node: this.node })
      .where('pid', '=', pid)
      .where('state', '=', 'idle')
      .where('runs', '=', runs)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('nodes').select('name').where('name', '=', this.node).where('stopped_at', 'is', null),
        ),
      )
      .returning('pid')
      .execute();
    return claimed.length === 1;
  }

  queuedElsewhere(): number {
    return this.#queuedElsewhere;
  }

  async liveNodes(): Promise<string[]> {
    const rows = await this.#options.db
      .selectFrom('nodes')
      .select('name')
      .where('stopped_at', 'is', null)
      .where('lease_until', '>=', sql<Date>`now()`)
      .where('name', '<>', this.node)
      .orderBy('name')
      .execute();
    return rows.map((row) => row.name);
  }

  sendKill(node: string, pid: number): void {
    this.#notify(nodeChannel(node), `kill ${pid}`);
  }

  announceSurplus(): void {
    this.#notify('mci_surplus', this.node);
  }

  sendOffer(node: string, slots: number): void {
    this.#notify(nodeChannel(node), `offer ${this.node} ${slots}`);
  }

  handOver(node: string, pids: number[]): void {
    // In the write batch: the other node reads the processes once this node's writes are committed.
    this.#store?.write((set) => {
      set.handOver(node, pids);
      set.notify(nodeChannel(node), `take ${pids.join(',')}`);
    });
    for (const pid of pids) this.#store?.forget(pid);
    this.#store?.flush();
  }

  async attach(handlers: ClusterHandlers): Promise<{ lastSeq: number }> {
    this.#handlers = handlers;
    const { url, db, connectMs } = this.#options;
    this.#bus = new NodeBus(
      url,
      db,
      this.node,
      {
        events: (events, nodes) => {
          events.forEach((stored, i) => {
            if (nodes[i] !== this.node && stored.route.pid !== undefined)
              this.#store?.forget(stored.route.pid);
          });
          handlers.events(events, nodes);
        },
        surplus: (node) => handlers.surplus(node),
        request: (request) => {
          if (request.type === 'kill') handlers.kill(request.pid);
          else if (request.type === 'offer') handlers.offer(request.node, request.slots);
          else {
            for (const pid of request.pids) this.#store?.forget(pid);
            handlers.take(request.pids);
          }
        },
      },
      connectMs,
    );
    return { lastSeq: await this.#bus.start() };
  }

  forget(pid: number): void {
    this.#store?.forget(pid);
  }

  async loadElsewhere(): Promise<Array<{ pid: number; owner: string; state: ProcessState }>> {
    const rows = await this.#options.db
      .selectFrom('processes')
      .select(['pid', 'owner', 'state'])
      .where('state', 'in', ['queued', 'running', 'terminating'])
      .where('node', '<>', this.node)
      .execute();
    return rows.map((row) => ({ pid: Number(row.pid), owner: row.owner, state: row.state as ProcessState }));
  }

  /** Stops listening and releases the lease (a clean stop). */
  async close(): Promise<void> {
    await this.#bus?.close();
    await this.#lease.release();
  }

  /** Sends a notification once this node's pending writes are committed. */
  #notify(channel: string, payload: string): void {
    this.#store?.write((set) => set.notify(channel, payload));
    this.#store?.flush();
  }
}

/**
 * The last statements of a cluster's batch: positions in the shared event log for the batch's events
 * (`seqs`, in order), then a notification to every node. The counter row stays locked until the
 * commit, so positions are handed out in commit order: a node that has read position N has seen every
 * event before it. Seqs that already have a position are skipped, so a batch tried again after its
 * commit was lost with its connection positions nothing twice.
 */
function positionEvents(db: Kysely<Database>, node: string, seqs: number[]): CompiledQuery[] {
  if (seqs.length === 0) return [];
  return [
    sql`WITH fresh AS (
      SELECT t.seq, row_number() OVER (ORDER BY t.ord) AS ord
        FROM unnest(${seqs}::bigint[]) WITH ORDINALITY AS t(seq, ord)
       WHERE NOT EXISTS (SELECT 1 FROM event_log g WHERE g.seq = t.seq)
    ), base AS (
      UPDATE counters SET value = value + (SELECT count(*) FROM fresh) WHERE name = 'pos'
      RETURNING value - (SELECT count(*) FROM fresh) AS first
    )
    INSERT INTO event_log (pos, seq, node)
      SELECT base.first + fresh.ord, fresh.seq, ${node} FROM base, fresh`.compile(db),
    sql`SELECT pg_notify('mci_events', '')`.compile(db),
  ];
}
