import pg from 'pg';

/** The advisory lock key a server holds on its database ("MCIS"). */
export const DATABASE_LOCK = 0x4d434953;

/**
 * The session-level advisory lock that says which kind of server uses a PostgreSQL database: a
 * server alone on it holds it exclusively, cluster nodes share it, so neither kind starts beside the
 * other. It lives on a connection of its own; when that connection drops (a database restart), the
 * lock is taken again.
 * @see https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS
 */
export class DatabaseLock {
  readonly #url: string;
  readonly #shared: boolean;
  readonly #connectMs: number;
  readonly #onLost: (message: string) => void;
  #client: pg.Client | undefined;
  /** The take in progress, if any: `release()` waits for it so that no connection keeps the lock. */
  #taking: Promise<unknown> | undefined;
  #closed = false;

  private constructor(url: string, shared: boolean, connectMs: number, onLost: (message: string) => void) {
    this.#url = url;
    this.#shared = shared;
    this.#connectMs = connectMs;
    this.#onLost = onLost;
  }

  /**
   * Takes the lock, exclusive or `shared`.
   * @returns the lock, or the mode another session holds it in.
   * @throws the connection error when the database cannot be reached.
   */
  static async take(
    url: string,
    options: { shared: boolean; connectMs: number; onLost: (message: string) => void },
  ): Promise<DatabaseLock | 'exclusive' | 'shared'> {
    const lock = new DatabaseLock(url, options.shared, options.connectMs, options.onLost);
    const held = await lock.#take();
    return held === 'ok' ? lock : held;
  }

  async release(): Promise<void> {
    this.#closed = true;
    await this.#taking?.catch(() => {});
    await this.#client?.end().catch(() => {});
  }

  #take(): Promise<'ok' | 'exclusive' | 'shared'> {
    const taking = this.#takeOnce();
    this.#taking = taking;
    return taking;
  }

  async #takeOnce(): Promise<'ok' | 'exclusive' | 'shared'> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: this.#connectMs });
    client.on('error', () => {});
    await client.connect();
    const take = this.#shared ? 'pg_try_advisory_lock_shared' : 'pg_try_advisory_lock';
    const { rows } = await client.query(`SELECT ${take}($1) AS ok`, [DATABASE_LOCK]);
    if (!rows[0]?.ok) {
      const held = await client.query(
        "SELECT bool_or(mode = 'ExclusiveLock') AS exclusive FROM pg_locks WHERE locktype = 'advisory' AND objid = $1",
        [DATABASE_LOCK],
      );
      await client.end();
      return held.rows[0]?.exclusive ? 'exclusive' : 'shared';
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return 'ok';
    }
    this.#client = client;
    client.once('end', () => {
      if (this.#client !== client || this.#closed) return;
      this.#client = undefined;
      void this.#retake();
    });
    return 'ok';
  }

  async #retake(): Promise<void> {
    for (let wait = 100; this.#client === undefined && !this.#closed; wait = Math.min(wait * 2, 2000)) {
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      try {
        if ((await this.#take()) !== 'ok') {
          this.#onLost('another server took the database lock while its connection was away');
          return;
        }
      } catch {
        // The database is still away: try again.
      }
    }
  }
}
