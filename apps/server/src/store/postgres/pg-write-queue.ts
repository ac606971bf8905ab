import type { PgBridge } from './pg-bridge.ts';
import type { PgParam, PgStatement } from './pg-protocol.ts';
import { numbered } from './pg-sql-database.ts';

/** Options of {@link PgWriteQueue}. */
export interface PgWriteQueueOptions {
  /** How long (ms) writes wait to be sent together; 0 sends once per event-loop turn. */
  flushDelayMs: number;
  /** A batch sent by the timer could not be assembled. */
  onError(error: unknown): void;
  /** Completes each batch before it is sent (a cluster node's lease check and event positions). */
  finish?(statements: PgStatement[]): void;
}

/**
 * The Postgres store's pending writes: queued as functions that add their statements when the batch
 * is assembled (so updates of one row queued in one batch can be merged), and sent to the worker as
 * one transaction after `flushDelayMs`, or at once on {@link PgWriteQueue.flush}, without waiting.
 */
export class PgWriteQueue {
  readonly #bridge: PgBridge;
  readonly #options: PgWriteQueueOptions;
  #writes: Array<() => void> = [];
  /** The statements of the batch being assembled by {@link PgWriteQueue.flush}. */
  #batch: PgStatement[] = [];
  #timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #fenced = false;

  constructor(bridge: PgBridge, options: PgWriteQueueOptions) {
    this.#bridge = bridge;
    this.#options = options;
  }

  /** Whether writes are dropped (see {@link PgWriteQueue.fence}). */
  get fenced(): boolean {
    return this.#fenced;
  }

  /** Queues a write: a function that adds its statements with {@link PgWriteQueue.add}. */
  enqueue(write: () => void): void {
    if (this.#fenced) return;
    this.#writes.push(write);
    if (this.#timer !== undefined) return;
    const flush = () => {
      this.#timer = undefined;
      try {
        this.flush();
      } catch (error) {
        this.#options.onError(error);
      }
    };
    const delayMs = this.#options.flushDelayMs;
    this.#timer = delayMs > 0 ? setTimeout(flush, delayMs) : setImmediate(flush);
  }

  /** Queues one statement with `?` placeholders (parameters captured now). */
  write(sql: string, params: PgParam[]): void {
    this.enqueue(() => this.add(sql, params));
  }

  /** Adds a statement with `?` placeholders to the batch being assembled (from a queued write). */
  add(sql: string, params: PgParam[]): void {
    this.#batch.push({ sql: numbered(sql), params });
  }

  /** Sends the queued writes as one transaction, without waiting for it. */
  flush(): void {
    this.#clearTimer();
    if (this.#writes.length === 0) return;
    const writes = this.#writes;
    this.#writes = [];
    this.#batch = [];
    for (const write of writes) write();
    const statements = this.#batch;
    this.#batch = [];
    if (statements.length === 0) return;
    this.#options.finish?.(statements);
    this.#bridge.post(statements);
  }

  /** Drops every queued and later write. */
  fence(): void {
    this.#fenced = true;
    this.#writes = [];
    this.#clearTimer();
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer as NodeJS.Timeout);
    clearImmediate(this.#timer as NodeJS.Immediate);
    this.#timer = undefined;
  }
}
