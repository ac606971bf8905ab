import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { StoreError } from '../store-error.ts';
import type { ClusterMessage, PgNotice, PgReply, PgRequest, PgStatement } from './pg-protocol.ts';

/** Options of {@link PgBridge}. */
export interface PgBridgeOptions {
  /** Connections of the worker's pool. @default 4 */
  poolSize?: number;
  /**
   * How long (ms) a synchronous call waits for the database (a read, a flush, a write past the
   * back-pressure bound) before `STORE_UNAVAILABLE`; the worker retries a statement after a lost
   * connection for as long. @default 5000
   */
  timeoutMs?: number;
  /** A batch of writes failed after its retries and was rolled back. */
  onLost(error: Error, writes: number): void;
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
 * The Postgres store's synchronous access to the database: `pg` runs on a worker thread; a call
 * posts its request and blocks on `Atomics.wait` until the worker answers (bounded by `timeoutMs`),
 * while {@link PgBridge.post} queues a write transaction without waiting. The worker runs requests in
 * order, so every call sees the writes posted before it. This is how a synchronous
 * {@link ProcessStore} contract is kept over an asynchronous driver.
 */
export class PgBridge {
  readonly url: string;
  readonly #worker: Worker;
  readonly #replies: MessagePort;
  readonly #shared = new Int32Array(new SharedArrayBuffer(4));
  readonly #timeoutMs: number;
  /** Why the worker thread died (every later call fails at once), if it did. */
  #died: Error | undefined;
  #nextId = 0;
  #acked = 0;
  #lastPosted = 0;
  /** Callers of {@link PgBridge.written}, in the order of the batch each waits for. */
  readonly #writtenWaiters: Array<{ id: number; resolve: () => void }> = [];
  #closed = false;

  constructor(url: string, options: PgBridgeOptions) {
    this.url = redactUrl(url);
    this.#timeoutMs = options.timeoutMs ?? 5000;
    const { port1, port2 } = new MessageChannel();
    this.#replies = port1;
    // The worker is a .ts file when running from source and .js once built.
    const worker = new URL(`./pg-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    this.#worker = new Worker(worker, {
      workerData: {
        url,
        poolSize: options.poolSize ?? 4,
        retryMs: this.#timeoutMs,
        shared: this.#shared,
        replies: port2,
      },
      transferList: [port2],
    });
    this.#worker.unref();
    this.#worker.on('error', (error) => {
      this.#died = error;
      options.onLost(error, this.pending);
      for (const waiter of this.#writtenWaiters.splice(0)) waiter.resolve();
    });
    this.#worker.on('message', (notice: PgNotice) => {
      if ('ack' in notice) this.#ack(notice.ack);
      else if ('lockLost' in notice) options.onLockLost?.(notice.lockLost);
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
   */
  written(): Promise<void> {
    const id = this.#lastPosted;
    if (this.#acked >= id || this.#died || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#writtenWaiters.push({ id, resolve }));
  }

  /** Every request up to `id` is done: answers the {@link PgBridge.written} callers waiting for it. */
  #ack(id: number): void {
    this.#acked = Math.max(this.#acked, id);
    while (this.#writtenWaiters.length > 0 && this.#writtenWaiters[0]!.id <= this.#acked)
      this.#writtenWaiters.shift()!.resolve();
  }

  /** Write batches posted and not yet acknowledged (an upper bound). */
  get pending(): number {
    return this.#nextId - this.#acked;
  }

  /** Queues `statements` as one transaction, without waiting (failures go to `onLost`). */
  post(statements: PgStatement[]): void {
    this.#lastPosted = ++this.#nextId;
    this.#send({ kind: 'tx', id: this.#lastPosted, statements, reply: false });
  }

  /**
   * Runs `statements` (in one transaction with `transaction`) after everything posted before, and
   * returns the rows of each.
   * @throws StoreError `STORE_UNAVAILABLE` when the database does not answer within `timeoutMs` or
   * fails the statement.
   */
  call(statements: PgStatement[], transaction = false): Array<Array<Record<string, unknown>>> {
    const id = ++this.#nextId;
    const request: PgRequest = transaction
      ? { kind: 'tx', id, statements, reply: true }
      : { kind: 'query', id, statements, reply: true };
    const reply = this.#wait(id, () => this.#send(request));
    if ('error' in reply)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.url,
        `the process database ${this.url} failed: ${reply.error.message}`,
        { cause: Object.assign(new Error(reply.error.message), { code: reply.error.code }) },
      );
    // Everything posted before this call is done.
    this.#ack(id);
    return reply.rows;
  }

  /**
   * Takes the session-level advisory lock `key` on a connection of the worker's own (taken again if
   * that connection drops). @returns false when another session holds it.
   * @throws StoreError `STORE_UNAVAILABLE` as {@link PgBridge.call}.
   */
  lock(key: number): boolean {
    const reply = this.#wait(++this.#nextId, (id) => this.#send({ kind: 'lock', id, key, reply: true }));
    if ('error' in reply)
      throw new StoreError('STORE_UNAVAILABLE', this.url, `cannot reach ${this.url}: ${reply.error.message}`);
    return reply.rows[0]?.[0]?.ok === true;
  }

  /**
   * Takes the lease of node `name` in the `nodes` table and renews it on the worker thread every
   * `renewMs` (so a busy main thread does not let it lapse), `leaseMs` ahead of the database clock;
   * {@link PgBridge.close} releases it. A `cluster` node also hears how many processes wait on the
   * other nodes at each renewal (`onCluster`). @returns false when a live node holds a lease under
   * that name.
   * @throws StoreError `STORE_UNAVAILABLE` as {@link PgBridge.call}.
   */
  lease(name: string, leaseMs: number, renewMs: number, cluster = false): boolean {
    const reply = this.#wait(++this.#nextId, (id) =>
      this.#send({ kind: 'lease', id, name, leaseMs, renewMs, cluster, reply: true }),
    );
    if ('error' in reply)
      throw new StoreError('STORE_UNAVAILABLE', this.url, `cannot reach ${this.url}: ${reply.error.message}`);
    return reply.rows[0]?.[0]?.ok === true;
  }

  /**
   * Listens for the event log's commits and for requests to node `node` (see `onCluster`).
   * @returns the position of the last event committed before listening.
   * @throws StoreError `STORE_UNAVAILABLE` when the database cannot be reached.
   */
  listen(node: string): number {
    const reply = this.#wait(++this.#nextId, (id) => this.#send({ kind: 'listen', id, node, reply: true }));
    if ('error' in reply)
      throw new StoreError('STORE_UNAVAILABLE', this.url, `cannot reach ${this.url}: ${reply.error.message}`);
    return Number(reply.rows[0]?.[0]?.lastPos ?? 0);
  }

  /** Rows of one read. @throws StoreError as {@link PgBridge.call}. */
  query(sql: string, params: PgStatement['params'] = []): Array<Record<string, unknown>> {
    return this.call([{ sql, params }])[0] ?? [];
  }

  /** Waits for the posted writes, ends the pool and the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#worker.ref();
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    try {
      this.#wait(++this.#nextId, (id) => this.#worker.postMessage({ kind: 'close', id, reply: true }));
    } finally {
      for (const waiter of this.#writtenWaiters.splice(0)) waiter.resolve();
      this.#replies.close();
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

  #wait(id: number, send: (id: number) => void): PgReply {
    let seen = Atomics.load(this.#shared, 0);
    send(id);
    const deadline = Date.now() + this.#timeoutMs;
    for (;;) {
      const reply = this.#take(id);
      if (reply) return reply;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new StoreError(
          'STORE_UNAVAILABLE',
          this.url,
          `the process database ${this.url} did not answer within ${this.#timeoutMs} ms; check that PostgreSQL is up and reachable`,
        );
      Atomics.wait(this.#shared, 0, seen, left);
      seen = Atomics.load(this.#shared, 0);
    }
  }

  /** The answer to request `id` if it arrived (answers to earlier calls that timed out are skipped). */
  #take(id: number): PgReply | undefined {
    for (let got = receiveMessageOnPort(this.#replies); got; got = receiveMessageOnPort(this.#replies)) {
      const reply = got.message as PgReply;
      if (reply.id === id) return reply;
    }
    return undefined;
  }
}
