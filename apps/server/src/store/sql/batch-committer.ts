import { StoreError } from '../store-error.ts';
import { WriteSet } from './write-set.ts';

/** Options of {@link BatchCommitter}. */
export interface BatchCommitterOptions {
  /** The database, for messages (a path, or a URL without its password). */
  label: string;
  /** Writes `set` in one transaction; rejects when it did not commit. */
  commit(set: WriteSet): Promise<void>;
  /** Whether a failed commit may succeed when tried again (a lost connection, a full disk). */
  retryable(error: unknown): boolean;
  /** How long (ms) writes wait to be committed together, unless someone waits for them. @default 5 */
  flushDelayMs?: number;
  /**
   * How long (ms) {@link BatchCommitter.committed} waits before `STORE_UNAVAILABLE`, and how long a
   * batch may wait to commit before {@link BatchCommitter.failure} reports it. @default 5000
   */
  timeoutMs?: number;
  /** The longest wait (ms) between attempts to commit a batch that failed. @default 2000 */
  maxRetryMs?: number;
  /** A batch failed three times in a row (it goes on being retried), or was dropped after an error that cannot pass. */
  onError(error: unknown, dropped: boolean): void;
  /** A batch committed after failures. */
  onRecovered?(): void;
}

/** Failed attempts of one batch (or ms of failing) after which the failure is reported. */
const REPORT_AFTER = 3;
const REPORT_AFTER_MS = 1000;

/** A caller waiting for the writes queued before it. */
interface Waiter {
  resolve(): void;
}

/**
 * Collects writes into {@link WriteSet}s and commits them one after another, in order: the set being
 * filled is sealed after `flushDelayMs`, or at the end of the event-loop turn when someone waits for
 * it ({@link BatchCommitter.committed}: every caller of one turn shares one commit), or, while a commit
 * is under way, when it ends (group commit: the slower the database, the larger the batches). A set whose
 * commit fails on an error that may pass (a lost connection, a full disk, a read-only file system)
 * stays at the head of the queue and is tried again with back-off until it commits; nothing behind it
 * commits first, so the database never holds a later write without an earlier one.
 */
export class BatchCommitter {
  readonly #options: BatchCommitterOptions;
  readonly #timeoutMs: number;
  #filling = new WriteSet();
  #fillingWaiters: Waiter[] = [];
  readonly #sealed: Array<{ set: WriteSet; waiters: Waiter[]; since: number }> = [];
  #timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #timerImmediate = false;
  #running: Promise<void> | undefined;
  #failure: unknown;
  #retryMs = 0;
  #closed = false;
  #fenced = false;
  /** When the head batch first failed (ms since the epoch), while it fails. */
  #failingSince: number | undefined;
  /** Failed attempts of the head batch. */
  #attempts = 0;

  constructor(options: BatchCommitterOptions) {
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? 5000;
  }

  /** Adds writes to the set being filled. @throws StoreError `STORE_CLOSED` after close. */
  write(add: (set: WriteSet) => void): void {
    if (this.#closed)
      throw new StoreError(
        'STORE_CLOSED',
        this.#options.label,
        `the process database ${this.#options.label} is closed`,
      );
    if (this.#fenced) return;
    add(this.#filling);
    this.#schedule(this.#options.flushDelayMs ?? 5);
  }

  /** Seals the set being filled (later writes go to the next batch) and starts committing it. */
  flush(): void {
    this.#clearTimer();
    this.#seal();
  }

  /**
   * Drops every queued write and every later one (a cluster node whose lease another node ended: the
   * database refuses its batches).
   */
  fence(): void {
    this.#fenced = true;
    this.#clearTimer();
    this.#filling = new WriteSet();
    for (const { waiters } of this.#sealed.splice(0)) for (const waiter of waiters) waiter.resolve();
    for (const waiter of this.#fillingWaiters.splice(0)) waiter.resolve();
  }

  /** Writes not yet committed (those being committed included). */
  get pending(): number {
    return this.#sealed.reduce((sum, { set }) => sum + set.size, this.#filling.size);
  }

  /**
   * Why writes are not being committed: the error of the last failed attempt, or a batch waiting
   * longer than `timeoutMs`; `undefined` while commits succeed.
   */
  get failure(): string | undefined {
    // A connection dropped once (a restart of the database's backend) is retried at once, unreported.
    if (
      this.#failure !== undefined &&
      (this.#attempts >= REPORT_AFTER || Date.now() - this.#failingSince! >= REPORT_AFTER_MS)
    )
      return this.#failure instanceof Error ? this.#failure.message : String(this.#failure);
    const oldest = this.#sealed[0];
    if (oldest && Date.now() - oldest.since > this.#timeoutMs)
      return `a batch has waited ${Date.now() - oldest.since} ms to commit`;
    return undefined;
  }

  /**
   * Resolves once every write made so far is committed.
   * @throws StoreError `STORE_UNAVAILABLE` after `timeoutMs` (the writes stay queued).
   */
  committed(): Promise<void> {
    const waiting = this.#waitFor();
    if (!waiting) return Promise.resolve();
    return this.#bounded(waiting);
  }

  /** Commits what is queued (waiting at most `waitMs`), then refuses writes. @returns writes left uncommitted. */
  async close(waitMs: number): Promise<number> {
    const waiting = this.#waitFor();
    if (waiting) {
      const signal = AbortSignal.timeout(waitMs);
      await Promise.race([
        waiting,
        new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
      ]);
    }
    this.#closed = true;
    this.#clearTimer();
    const left = this.#sealed.reduce((sum, { set }) => sum + set.size, 0) + this.#filling.size;
    return left;
  }

  /** A promise of the commit of everything written so far; none when nothing is pending. */
  #waitFor(): Promise<void> | undefined {
    if (this.#filling.size > 0) {
      const done = new Promise<void>((resolve) => this.#fillingWaiters.push({ resolve }));
      this.#schedule(0);
      return done;
    }
    const last = this.#sealed.at(-1);
    if (!last) return undefined;
    return new Promise<void>((resolve) => last.waiters.push({ resolve }));
  }

  #bounded(promise: Promise<void>): Promise<void> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    return new Promise<void>((resolve, reject) => {
      const timedOut = () =>
        reject(
          new StoreError(
            'STORE_UNAVAILABLE',
            this.#options.label,
            `the process database ${this.#options.label} did not commit within ${this.#timeoutMs} ms` +
              (this.failure ? ` (${this.failure})` : ''),
          ),
        );
      signal.addEventListener('abort', timedOut, { once: true });
      void promise.then(() => {
        signal.removeEventListener('abort', timedOut);
        resolve();
      });
    });
  }

  /** Seals the set being filled and starts committing, now or after `delayMs`. */
  #schedule(delayMs: number): void {
    if (this.#timer !== undefined) {
      if (delayMs > 0 || this.#timerImmediate) return;
      this.#clearTimer();
    }
    this.#timerImmediate = delayMs <= 0;
    const seal = () => {
      this.#timer = undefined;
      this.#seal();
    };
    this.#timer = delayMs > 0 ? setTimeout(seal, delayMs) : setImmediate(seal);
  }

  /**
   * Seals the set being filled and starts committing it, unless a commit is under way: then the set
   * goes on filling and is sealed when that commit ends, so batches grow while commits are slow.
   */
  #seal(): void {
    if (this.#running) return;
    if (this.#filling.size > 0) {
      this.#sealed.push({ set: this.#filling, waiters: this.#fillingWaiters, since: Date.now() });
      this.#filling = new WriteSet();
      this.#fillingWaiters = [];
    }
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
  }

  /** Commits the sealed sets in order; a failed one is retried until it commits or cannot. */
  async #run(): Promise<void> {
    while (this.#sealed.length > 0) {
      const head = this.#sealed[0]!;
      try {
        await this.#options.commit(head.set);
      } catch (error) {
        if (this.#closed) return;
        if (this.#options.retryable(error)) {
          this.#failingSince ??= Date.now();
          if (++this.#attempts === REPORT_AFTER) this.#options.onError(error, false);
          this.#failure = error;
          this.#retryMs = Math.min(Math.max(this.#retryMs * 2, 50), this.#options.maxRetryMs ?? 2000);
          await new Promise((resolve) => setTimeout(resolve, this.#retryMs).unref());
          continue;
        }
        this.#options.onError(error, true);
      }
      this.#sealed.shift();
      for (const waiter of head.waiters) waiter.resolve();
      if (this.#sealed.length === 0 && this.#filling.size > 0) {
        this.#clearTimer();
        this.#sealed.push({ set: this.#filling, waiters: this.#fillingWaiters, since: Date.now() });
        this.#filling = new WriteSet();
        this.#fillingWaiters = [];
      }
      if (this.#failure !== undefined) {
        if (this.#attempts >= REPORT_AFTER) this.#options.onRecovered?.();
        this.#failure = undefined;
        this.#failingSince = undefined;
        this.#attempts = 0;
        this.#retryMs = 0;
      }
    }
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer as NodeJS.Timeout);
    clearImmediate(this.#timer as NodeJS.Immediate);
    this.#timer = undefined;
  }
}
