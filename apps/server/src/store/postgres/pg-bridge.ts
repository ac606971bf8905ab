import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StoreError } from '../store-error.ts';
import type { ClusterMessage, PgNotice, PgReply, PgRequest, PgStatement } from './pg-protocol.ts';

/** Options of {@link PgBridge}. */
export interface PgBridgeOptions {
  /** Connections of the worker's pool. @default 4 */
  poolSize?: number;
  /**
   * How long (ms) a call waits for the database (a read, a commit awaited by
   * {@link PgBridge.written}) before it rejects with `STORE_UNAVAILABLE`; past it the store reports
   * itself unavailable. Write batches are retried after connection failures for as long as it takes.
   * @default 5000
   */
  timeoutMs?: number;
  /** A batch of writes failed with an SQL error (not a connection failure) and was rolled back. */
  onLost(error: Error, writes: number): void;
  /** Write batches fail on connection errors and are being retried (`error`), or commit again (`undefined`). */
  onRetrying?(error: string | undefined): void;
  /** The database lock was lost to another server (see {@link PgBridge.lock}). */
  onLockLost?(message: string): void;
  /**
   * This node ended the leases of nodes that stopped without releasing them (see {@link PgBridge.lease})
   * and took over `adopted` processes that were not idle.
   */
  onNodesExpired?(names: string[], adopted: number): void;
  /** A message for a cluster (events after {@link PgBridge.listen}, requests from other nodes). */
  onCluster?(message: ClusterMessage): void;
  /** Another node ended this node's lease: it was not renewed in time. */
  onLeaseLost?(name: string): void;
}

/** The database URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/**
 * The Postgres store's access to the database: `pg` runs on a worker thread that runs requests one
 * after another in the order they were posted, so every read sees the writes posted before it.
 * {@link PgBridge.post} queues a write transaction without waiting; {@link PgBridge.call} and the
 * other requests resolve with the worker's answer. Nothing here blocks the event loop.
 */
export class PgBridge {
  readonly url: string;
  readonly #worker: Worker;
  readonly #timeoutMs: number;
  /** Why the worker thread died (every later call fails at once), if it did. */
  #died: Error | undefined;
  #nextId = 0;
  #acked = 0;
  #lastPosted = 0;
  /** When each posted batch that is not acknowledged yet was posted (ms since the epoch), by id. */
  readonly #unacked = new Map<number, number>();
  /** Callers of {@link PgBridge.written}, in the order of the batch each waits for. */
  readonly #writtenWaiters: Array<{ id: number; resolve: () => void }> = [];
  /** Callers waiting for the answer to a request, by id. */
  readonly #calls = new Map<number, (reply: PgReply) => void>();
  /** The connection error batches are being retried after, while they are. */
  #retrying: string | undefined;
  #closed = false;

  constructor(url: string, options: PgBridgeOptions) {
    this.url = redactUrl(url);
    this.#timeoutMs = options.timeoutMs ?? 5000;
    // The worker is a .ts file when running from source and .js once built.
    const worker = new URL(`./pg-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    this.#worker = new Worker(worker, {
      workerData: { url, poolSize: options.poolSize ?? 4, connectMs: this.#timeoutMs },
    });
    this.#worker.unref();
    this.#worker.on('error', (error) => {
      this.#died = error;
      options.onLost(error, this.pending);
      for (const waiter of this.#writtenWaiters.splice(0)) waiter.resolve();
      for (const [id, answer] of this.#calls) answer({ id, error: { message: error.message } });
      this.#calls.clear();
    });
    this.#worker.on('message', (notice: PgNotice) => {
      if ('reply' in notice) {
        const answer = this.#calls.get(notice.reply.id);
        this.#calls.delete(notice.reply.id);
        answer?.(notice.reply);
      } else if ('ack' in notice) this.#ack(notice.ack);
      else if ('retrying' in notice) {
        this.#retrying = notice.retrying ?? undefined;
        options.onRetrying?.(this.#retrying);
      } else if ('lockLost' in notice) options.onLockLost?.(notice.lockLost);
      else if ('nodesExpired' in notice) options.onNodesExpired?.(notice.nodesExpired, notice.adopted);
      else if ('cluster' in notice) options.onCluster?.(notice.cluster);
      else if ('leaseLost' in notice) options.onLeaseLost?.(notice.leaseLost);
      else {
        this.#ack(notice.lost);
        options.onLost(new Error(notice.error), notice.writes);
      }
    });
  }

  /**
   * Resolves once every write batch posted so far is committed, or reported lost to `onLost` (also
   * when the worker stops or the bridge closes).
   * @throws StoreError `STORE_UNAVAILABLE` when that takes longer than `timeoutMs` (the batches stay
   * queued and are retried).
   */
  written(): Promise<void> {
    const id = this.#lastPosted;
    if (this.#acked >= id || this.#died || this.#closed) return Promise.resolve();
    const committed = new Promise<void>((resolve) => this.#writtenWaiters.push({ id, resolve }));
    return this.#bounded(committed, 'did not commit the writes');
  }

  /**
   * Whether writes are being committed: not while batches fail on connection errors, nor while the
   * oldest batch posted has waited longer than `timeoutMs` (a stalled database).
   */
  health(): { ok: true } | { ok: false; message: string } {
    if (this.#died) return { ok: false, message: `the connection thread of ${this.url} stopped: ${this.#died.message}` };
    if (this.#retrying)
      return { ok: false, message: `the process database ${this.url} cannot be written: ${this.#retrying}` };
    const oldest = this.#unacked.values().next().value;
    if (oldest !== undefined && Date.now() - oldest > this.#timeoutMs)
      return {
        ok: false,
        message: `the process database ${this.url} has not committed for ${Date.now() - oldest} ms`,
      };
    return { ok: true };
  }

  /** Every request up to `id` is done: answers the {@link PgBridge.written} callers waiting for it. */
  #ack(id: number): void {
    this.#acked = Math.max(this.#acked, id);
    for (const posted of this.#unacked.keys()) {
      if (posted > this.#acked) break;
      this.#unacked.delete(posted);
    }
    while (this.#writtenWaiters.length > 0 && this.#writtenWaiters[0]!.id <= this.#acked)
      this.#writtenWaiters.shift()!.resolve();
  }

  /** Write batches posted and not yet acknowledged. */
  get pending(): number {
    return this.#unacked.size;
  }

  /** Queues `statements` as one transaction, without waiting (failures go to `onLost`). */
  post(statements: PgStatement[]): void {
    this.#lastPosted = ++this.#nextId;
    this.#send({ kind: 'tx', id: this.#lastPosted, statements, reply: false });
    this.#unacked.set(this.#lastPosted, Date.now());
  }

  /**
   * Runs `statements` (in one transaction with `transaction`) after everything posted before, and
   * resolves with the rows of each.
   * @throws StoreError `STORE_UNAVAILABLE` when the database does not answer within `timeoutMs` or
   * fails the statement.
   */
  async call(statements: PgStatement[], transaction = false): Promise<Array<Array<Record<string, unknown>>>> {
    const id = ++this.#nextId;
    const reply = await this.#request(
      id,
      transaction ? { kind: 'tx', id, statements, reply: true } : { kind: 'query', id, statements, reply: true },
    );
    // Everything posted before this call is done.
    this.#ack(id);
    return reply;
  }

  /**
   * Takes the session-level advisory lock `key`, exclusive or `shared`, on a connection of the
   * worker's own (taken again if that connection drops).
   * @returns `'ok'`, or the mode in which another session holds it.
   * @throws StoreError `STORE_UNAVAILABLE` as {@link PgBridge.call}.
   */
  async lock(key: number, shared: boolean): Promise<'ok' | 'exclusive' | 'shared'> {
    const id = ++this.#nextId;
    const rows = await this.#request(id, { kind: 'lock', id, key, shared, reply: true });
    return rows[0]?.[0]?.held as 'ok' | 'exclusive' | 'shared';
  }

  /**
   * Takes the lease of node `name` in the `nodes` table and renews it on the worker thread every
   * `renewMs`, `leaseMs` ahead of the database clock; {@link PgBridge.close} releases it. A `cluster`
   * node also hears how many processes wait on the other nodes at each renewal (`onCluster`).
   * @returns false when a live node holds a lease under that name.
   * @throws StoreError `STORE_UNAVAILABLE` as {@link PgBridge.call}.
   */
  async lease(name: string, leaseMs: number, renewMs: number, cluster = false): Promise<boolean> {
    const id = ++this.#nextId;
    const rows = await this.#request(id, { kind: 'lease', id, name, leaseMs, renewMs, cluster, reply: true });
    return rows[0]?.[0]?.ok === true;
  }

  /**
   * Listens for the event log's commits and for requests to node `node` (see `onCluster`).
   * @returns the position of the last event committed before listening.
   * @throws StoreError `STORE_UNAVAILABLE` when the database cannot be reached.
   */
  async listen(node: string): Promise<number> {
    const id = ++this.#nextId;
    const rows = await this.#request(id, { kind: 'listen', id, node, reply: true });
    return Number(rows[0]?.[0]?.lastPos ?? 0);
  }

  /** Rows of one read. @throws StoreError as {@link PgBridge.call}. */
  async query(sql: string, params: PgStatement['params'] = []): Promise<Array<Record<string, unknown>>> {
    return (await this.call([{ sql, params }]))[0] ?? [];
  }

  /** Waits (at most `timeoutMs`) for the posted writes, ends the pool and the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#worker.ref();
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    try {
      const id = ++this.#nextId;
      await this.#request(id, { kind: 'close', id, reply: true });
    } finally {
      this.#closed = true;
      for (const waiter of this.#writtenWaiters.splice(0)) waiter.resolve();
      await this.#worker.terminate();
      await exited;
    }
  }

  #send(request: PgRequest): void {
    if (this.#closed)
      throw new StoreError('STORE_CLOSED', this.url, `the process database ${this.url} is closed`);
    if (this.#died)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.url,
        `the connection thread of ${this.url} stopped (${this.#died.message}); restart the server`,
        { cause: this.#died },
      );
    this.#worker.postMessage(request);
  }

  /** Sends `request` and waits (at most `timeoutMs`) for its answer. */
  async #request(id: number, request: PgRequest): Promise<Array<Array<Record<string, unknown>>>> {
    const answered = new Promise<PgReply>((resolve) => this.#calls.set(id, resolve));
    this.#send(request);
    const reply = await this.#bounded(answered, 'did not answer').finally(() => this.#calls.delete(id));
    if ('error' in reply)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.url,
        `the process database ${this.url} failed: ${reply.error.message}`,
        { cause: Object.assign(new Error(reply.error.message), { code: reply.error.code }) },
      );
    return reply.rows;
  }

  /** `promise`, or `STORE_UNAVAILABLE` once it has taken `timeoutMs`. */
  #bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    return new Promise<T>((resolve, reject) => {
      const timedOut = () =>
        reject(
          new StoreError(
            'STORE_UNAVAILABLE',
            this.url,
            `the process database ${this.url} ${what} within ${this.#timeoutMs} ms; check that PostgreSQL is up and reachable`,
          ),
        );
      signal.addEventListener('abort', timedOut, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', timedOut);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', timedOut);
          reject(error);
        },
      );
    });
  }
}
