import type { DatabaseSync } from 'node:sqlite';

/** Options of {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /** Wait this long (ms) before committing a batch; 0 commits at the end of the event-loop turn. */
  flushDelayMs: number;
  /** Runs inside each batch transaction after its writes (to persist counters). */
  beforeCommit?: () => void;
  /**
   * A batch failed and was rolled back (disk full, read-only file system, I/O error); its writes are
   * kept and committed again with the next batch. Called for the first failure after a commit.
   */
  onError(error: unknown, writes: number): void;
  /** A batch committed after earlier ones had failed. */
  onRecovered?(): void;
  /** The longest wait (ms) between attempts to commit writes kept after a failure. @default 2000 */
  maxRetryMs?: number;
}

/** A caller of {@link WriteBatcher.committed} waiting for the writes queued before it. */
interface Waiter {
  resolve(): void;
}

/**
 * Collects writes and commits them together in one transaction, at the end of the event-loop turn (or
 * after `flushDelayMs`), so the hot path pays for one commit per batch instead of one per write.
 * {@link WriteBatcher.flush} commits at once (before a read, so reads see every earlier write).
 *
 * A batch that fails is rolled back and its writes stay at the head of the queue, retried with
 * back-off until they commit: a write is dropped only by {@link WriteBatcher.abandon} (when the store
 * closes while the disk still refuses it). {@link WriteBatcher.committed} resolves when the writes
 * queued before it are committed, with every caller of one event-loop turn sharing one commit.
 */
export class WriteBatcher {
  readonly #db: DatabaseSync;
  readonly #options: WriteBatcherOptions;
  #writes: Array<() => void> = [];
  #waiters: Waiter[] = [];
  #timer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  /** Whether {@link WriteBatcher.#timer} commits at the end of this event-loop turn. */
  #timerIsImmediate = false;
  /** The error of the last failed commit, until one succeeds. */
  #failure: unknown;
  #retryMs = 0;

  constructor(db: DatabaseSync, options: WriteBatcherOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Writes waiting for the next commit. */
  get pending(): number {
    return this.#writes.length;
  }

  /** The error of the last failed commit while writes wait to be retried; `undefined` when commits succeed. */
  get failure(): unknown {
    return this.#failure;
  }

  add(write: () => void): void {
    this.#writes.push(write);
    if (this.#failure === undefined) this.#schedule(this.#options.flushDelayMs);
  }

  /** Resolves once every write queued so far is committed (at the end of this event-loop turn, if it can). */
  committed(): Promise<void> {
    if (this.#writes.length === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.#waiters.push({ resolve }));
    if (this.#failure === undefined) this.#schedule(0);
    return done;
  }

  /**
   * Commits every pending write now, in one transaction. Never throws: a failure goes to `onError`,
   * and the writes are retried later.
   */
  flush(): void {
    this.#clearTimer();
    if (this.#writes.length === 0) return;
    const writes = this.#writes;
    const waiters = this.#waiters;
    try {
      this.#db.exec('BEGIN');
      for (const write of writes) write();
      this.#options.beforeCommit?.();
      this.#db.exec('COMMIT');
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      const first = this.#failure === undefined;
      this.#failure = error;
      if (first) this.#options.onError(error, writes.length);
      this.#retryMs = Math.min(Math.max(this.#retryMs * 2, 50), this.#options.maxRetryMs ?? 2000);
      this.#schedule(this.#retryMs);
      return;
    }
    this.#writes = [];
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve();
    if (this.#failure !== undefined) {
      this.#failure = undefined;
      this.#retryMs = 0;
      this.#options.onRecovered?.();
    }
  }

  /** Drops the writes that could not be committed (the store is closing); returns how many. */
  abandon(): number {
    this.#clearTimer();
    const dropped = this.#writes.length;
    this.#writes = [];
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    return dropped;
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined) {
      // A commit at the end of this turn replaces a later one.
      if (delayMs > 0 || this.#timerIsImmediate) return;
      this.#clearTimer();
    }
    const flush = () => {
      this.#timer = undefined;
      this.flush();
    };
    this.#timerIsImmediate = delayMs <= 0;
    this.#timer = delayMs > 0 ? setTimeout(flush, delayMs) : setImmediate(flush);
    // A retry must not keep a stopping process alive.
    if (this.#failure !== undefined) this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer as NodeJS.Timeout);
    clearImmediate(this.#timer as NodeJS.Immediate);
    this.#timer = undefined;
  }
}
