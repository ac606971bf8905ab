import type { DatabaseSync } from 'node:sqlite';

/** Options of {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /** Wait this long (ms) before committing a batch; 0 commits at the end of the event-loop turn. */
  flushDelayMs: number;
  /** Runs inside each batch transaction after its writes (to persist counters). */
  beforeCommit?: () => void;
  /** A batch failed and was rolled back (disk full, I/O error); its writes are lost. */
  onError(error: unknown, writes: number): void;
}

/**
 * Collects writes and commits them together in one transaction, at the end of the event-loop turn (or
 * after `flushDelayMs`), so the hot path pays for one commit per batch instead of one per write.
 * {@link WriteBatcher.flush} commits at once (before a read, so reads see every earlier write).
 */
export class WriteBatcher {
  readonly #db: DatabaseSync;
  readonly #options: WriteBatcherOptions;
  #writes: Array<() => void> = [];
  #timer: NodeJS.Immediate | NodeJS.Timeout | undefined;

  constructor(db: DatabaseSync, options: WriteBatcherOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Writes waiting for the next commit. */
  get pending(): number {
    return this.#writes.length;
  }

  add(write: () => void): void {
    this.#writes.push(write);
    if (this.#timer !== undefined) return;
    const flush = () => {
      this.#timer = undefined;
      this.flush();
    };
    this.#timer =
      this.#options.flushDelayMs > 0 ? setTimeout(flush, this.#options.flushDelayMs) : setImmediate(flush);
  }

  /** Commits every pending write now, in one transaction. Never throws (failures go to `onError`). */
  flush(): void {
    this.#clearTimer();
    if (this.#writes.length === 0) return;
    const writes = this.#writes;
    this.#writes = [];
    try {
      this.#db.exec('BEGIN');
      for (const write of writes) write();
      this.#options.beforeCommit?.();
      this.#db.exec('COMMIT');
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      this.#options.onError(error, writes.length);
    }
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer as NodeJS.Timeout);
    clearImmediate(this.#timer as NodeJS.Immediate);
    this.#timer = undefined;
  }
}
