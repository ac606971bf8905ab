import type pg from 'pg';
import { onLiveConnection } from '../store/sql/postgres-errors.ts';
import { StoreError } from '../store/store-error.ts';

/**
 * Ids reserved from the shared counter `name` of a cluster's database in blocks (one
 * `UPDATE ... RETURNING` each; the row lock makes the blocks of several nodes disjoint). The next
 * block is reserved in the background once half of the current one is used, so taking an id never
 * waits for the database.
 */
export class IdBlock {
  readonly #pool: pg.Pool;
  readonly #name: 'pid' | 'seq';
  readonly #size: number;
  readonly #label: string;
  #next = 1;
  #last = 0;
  /** The first id of a block reserved ahead, once its reservation has answered. */
  #ahead: number | undefined;
  #reserving: Promise<void> | undefined;

  constructor(pool: pg.Pool, name: 'pid' | 'seq', size: number, label: string) {
    this.#pool = pool;
    this.#name = name;
    this.#size = size;
    this.#label = label;
  }

  /** Reserves the first block (before the first id is taken). @throws the database's error. */
  async start(): Promise<void> {
    await this.#reserve();
    this.#switch();
  }

  /** @throws StoreError `STORE_UNAVAILABLE` when no reserved id is left (the database is away). */
  take(): number {
    if (this.#next > this.#last) this.#switch();
    if (this.#next > this.#last)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.#label,
        `no ${this.#name} is reserved: the process database ${this.#label} did not answer in time`,
      );
    if (this.#last - this.#next < this.#size / 2 && this.#ahead === undefined)
      void this.#reserve().catch(() => {});
    return this.#next++;
  }

  /** Whether {@link IdBlock.take} has an id to give at once. */
  available(): boolean {
    return this.#next <= this.#last || this.#ahead !== undefined;
  }

  /**
   * Resolves once an id can be taken (at once unless a burst used every reserved id).
   * @throws StoreError `STORE_UNAVAILABLE` when the reservation fails.
   */
  async ready(): Promise<void> {
    try {
      while (!this.available()) await this.#reserve();
    } catch (error) {
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.#label,
        `cannot reserve a ${this.#name} in the process database ${this.#label}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /**
   * Drops the ids left in the current block and switches to a new one: every id taken afterwards is
   * larger than every id any node was given before the call.
   * @throws the database's error.
   */
  async renew(): Promise<void> {
    await this.#reserving?.catch(() => {});
    this.#ahead = undefined;
    await this.#reserve();
    this.#switch();
  }

  #switch(): void {
    if (this.#ahead === undefined) return;
    this.#next = this.#ahead;
    this.#last = this.#ahead + this.#size - 1;
    this.#ahead = undefined;
  }

  #reserve(): Promise<void> {
    this.#reserving ??= this.#reserveBlock().finally(() => {
      this.#reserving = undefined;
    });
    return this.#reserving;
  }

  /**
   * One reservation, on a live connection of the pool ({@link onLiveConnection}: a connection the
   * database ended is passed over). A block whose answer was lost is only skipped.
   */
  async #reserveBlock(): Promise<void> {
    const { rows } = await onLiveConnection(() =>
      this.#pool.query<{ value: number }>(
        'UPDATE counters SET value = value + $1 WHERE name = $2 RETURNING value',
        [this.#size, this.#name],
      ),
    );
    this.#ahead = Number(rows[0]?.value) - this.#size + 1;
  }
}
