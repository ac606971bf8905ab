import type pg from 'pg';

/** The error a cluster node's write batch raises once its lease was ended (`mci_check_lease`). */
export const LEASE_LOST = 'mci: node lease lost';

/** What a node's lease reports to the store (see {@link NodeLease}). */
export interface NodeLeaseEvents {
  /**
   * This node ended the leases of `names`: they expired without being released. It took over the
   * processes that were not idle of those nodes and of nodes that stopped (`adopted`: `[pid, node]`).
   */
  expired(names: string[], adopted: Array<[number, string]>): void;
  /** At each renewal (a cluster's lease only): how many processes wait in the queues of the other nodes. */
  queuedElsewhere?(count: number): void;
  /** This node's own lease was ended by another node (it was not renewed in time). */
  lost(): void;
}

/**
 * A node's row in `nodes`, held while the server runs.
 * Times come from the database clock (`now()`), so nodes with skewed clocks agree on expiry. Every
 * `renewMs` the lease is pushed to `leaseMs` ahead, and leases of other nodes that expired are ended
 * (`stopped_at`, `stopped_by`), and the processes that are not idle of those nodes and of nodes that
 * stopped are handed to this node (`processes.node`): one statement, so of several live nodes exactly
 * one ends each expired lease and takes each process. A renewal that fails (the database away) is tried again at the next tick.
 */
export class NodeLease {
  readonly #pool: pg.Pool;
  readonly name: string;
  readonly #leaseMs: number;
  readonly #events: NodeLeaseEvents;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();

  constructor(pool: pg.Pool, name: string, leaseMs: number, events: NodeLeaseEvents) {
    this.#pool = pool;
    this.name = name;
    this.#leaseMs = leaseMs;
    this.#events = events;
  }

  /**
   * Takes the row `name`: a new one, or one whose lease was released or expired.
   * @returns false when a live node holds a lease under that name.
   */
  async acquire(renewMs: number): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `INSERT INTO nodes (name, started_at, renewed_at, lease_until)
         VALUES ($1, now(), now(), now() + $2 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET started_at = now(), renewed_at = now(),
         lease_until = excluded.lease_until, stopped_at = NULL, stopped_by = NULL
       WHERE nodes.stopped_at IS NOT NULL OR nodes.lease_until < now()`,
      [this.name, this.#leaseMs],
    );
    if (rowCount !== 1) return false;
    this.#timer = setInterval(() => {
      this.#tick = this.#tick.then(() => this.#renew());
    }, renewMs);
    this.#timer.unref();
    this.#tick = this.#renew();
    return true;
  }

  /**
   * Stops renewing and ends the lease at once (a clean stop). It waits at most `waitMs` for the
   * database; a lease not released in that time ends when it expires.
   */
  async release(waitMs = 1000): Promise<void> {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    const released = this.#tick.then(() =>
      this.#pool.query(
        `UPDATE nodes SET lease_until = now(), stopped_at = now(), stopped_by = $1
         WHERE name = $1 AND stopped_at IS NULL`,
        [this.name],
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    await Promise.race([released.catch(() => {}), timeout]);
    clearTimeout(timer);
  }

  async #renew(): Promise<void> {
    try {
      const renewed = await this.#pool.query(
        `UPDATE nodes SET renewed_at = now(), lease_until = now() + $2 * interval '1 millisecond'
         WHERE name = $1 AND stopped_at IS NULL`,
        [this.name, this.#leaseMs],
      );
      if (renewed.rowCount === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
        this.#events.lost();
        return;
      }
      const { rows } = await this.#pool.query<{ names: string[]; adopted: Array<[number, string]> }>(
        `WITH ended AS (
           UPDATE nodes SET stopped_at = now(), stopped_by = $1
            WHERE lease_until < now() AND stopped_at IS NULL AND name <> $1
           RETURNING name
         ), adopted AS (
           UPDATE processes p SET node = $1 FROM nodes n
            WHERE p.node = n.name AND p.state NOT IN ('idle', 'suspended') AND n.name <> $1
              AND (n.name IN (SELECT name FROM ended) OR n.stopped_at IS NOT NULL)
           RETURNING p.pid, n.name
         )
         SELECT (SELECT coalesce(json_agg(name ORDER BY name), '[]') FROM ended) AS names,
                (SELECT coalesce(json_agg(json_build_array(pid, name) ORDER BY pid), '[]') FROM adopted) AS adopted`,
        [this.name],
      );
      const { names, adopted } = rows[0] ?? { names: [], adopted: [] };
      if (names.length > 0 || adopted.length > 0) this.#events.expired(names, adopted);
      if (this.#events.queuedElsewhere) {
        const queued = await this.#pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM processes WHERE state = 'queued' AND node <> $1",
          [this.name],
        );
        this.#events.queuedElsewhere(queued.rows[0]?.n ?? 0);
      }
    } catch {
      // The database is away: the next tick tries again (the lease lasts leaseMs).
    }
  }
}
