import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { StoreError } from './store-error.ts';
import { WriteBatcher, type WriteBatcherOptions } from './write-batcher.ts';

/** A value bound to a statement parameter. */
export type SqlParam = string | number | null | Uint8Array;

/**
 * The SQLite store's access to its connection: prepared statements cached by their SQL, writes queued
 * into {@link WriteBatcher} batches, reads that commit pending writes first, and the closed guard.
 */
export class SqlWriter {
  readonly #db: DatabaseSync;
  readonly #path: string;
  readonly #batch: WriteBatcher;
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;

  constructor(db: DatabaseSync, path: string, options: WriteBatcherOptions) {
    this.#db = db;
    this.#path = path;
    this.#batch = new WriteBatcher(db, options);
  }

  get closed(): boolean {
    return this.#closed;
  }

  statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Queues a write for the next batch (parameters are captured now: callers mutate their records).
   * @throws StoreError `STORE_CLOSED` after {@link SqlWriter.close}.
   */
  write(sql: string, params: SqlParam[]): void {
    this.#assertOpen();
    const statement = this.statement(sql);
    this.#batch.add(() => statement.run(...params));
  }

  /** Queues a write function for the next batch. @throws StoreError `STORE_CLOSED` when closed. */
  enqueue(write: () => void): void {
    this.#assertOpen();
    this.#batch.add(write);
  }

  /** Runs a write at once, outside the batch. @throws StoreError `STORE_CLOSED` when closed. */
  runNow(sql: string, params: SqlParam[]): void {
    this.#assertOpen();
    this.statement(sql).run(...params);
  }

  /** A statement for reading, after committing pending writes so it sees them. */
  read(sql: string): StatementSync {
    this.flush();
    return this.statement(sql);
  }

  /** Commits pending writes now. @throws StoreError `STORE_CLOSED` when closed. */
  flush(): void {
    this.#assertOpen();
    this.#batch.flush();
  }

  /** Resolves once every write queued so far is committed (see {@link WriteBatcher.committed}). */
  committed(): Promise<void> {
    return this.#batch.committed();
  }

  /** The error of the last failed commit while writes wait to be retried. */
  get failure(): unknown {
    return this.#batch.failure;
  }

  /**
   * Commits pending writes (drops them if the database still refuses: returns how many), runs `last`
   * (still open), then refuses any further use.
   */
  close(last: () => void): number {
    this.#batch.flush();
    const dropped = this.#batch.failure === undefined ? 0 : this.#batch.abandon();
    if (dropped === 0) last();
    this.#closed = true;
    return dropped;
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new StoreError('STORE_CLOSED', this.#path, `the process database ${this.#path} is closed`);
  }
}
