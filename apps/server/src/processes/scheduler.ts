import { FairQueue } from './fair-queue.ts';

/**
 * Decides what runs next: a {@link FairQueue} (FIFO per principal, round-robin across principals)
 * drained into at most `concurrency` running slots, of which a principal holds at most
 * `maxRunning(principal)` (its quota: long runs of one cannot take every slot from the others, and a
 * principal at its limit is passed over, so its queued items never hold a slot another could use).
 * `start` is called for each item that gets a slot; the caller reports the end of its run with
 * {@link Scheduler.finished}. `maxRunning` is asked at each dispatch, so it may change (a cluster node
 * counts the principal's runs on other nodes in it): call {@link Scheduler.dispatch} when it grows.
 */
export class Scheduler<T> {
  readonly #queue = new FairQueue<T>();
  readonly #concurrency: number;
  readonly #maxRunning: (principal: string) => number;
  readonly #start: (item: T) => void;
  #running = 0;
  readonly #runningBy = new Map<string, number>();
  #paused = false;

  /** @param maxRunning the most items of `principal` running at once. @default `concurrency` for all */
  constructor(
    concurrency: number,
    start: (item: T) => void,
    maxRunning: (principal: string) => number = () => concurrency,
  ) {
    this.#concurrency = concurrency;
    this.#maxRunning = maxRunning;
    this.#start = start;
  }

  /** Items waiting for a slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Slots free for items now (0 while paused). */
  get free(): number {
    return this.#paused ? 0 : Math.max(0, this.#concurrency - this.#running);
  }

  /** Items of `principal` running now. */
  runningOf(principal: string): number {
    return this.#runningBy.get(principal) ?? 0;
  }

  /** Waiting items that `accept`. */
  countWaiting(accept: (item: T) => boolean): number {
    let count = 0;
    for (const item of this.#queue.values()) if (accept(item)) count++;
    return count;
  }

  /** Takes up to `count` waiting items that `accept`, oldest first, out of the queue. */
  takeWaiting(count: number, accept: (item: T) => boolean): T[] {
    const taken: T[] = [];
    for (const item of this.#queue.values()) {
      if (taken.length >= count) break;
      if (accept(item) && this.#queue.delete(item)) taken.push(item);
    }
    return taken;
  }

  /** Queues `item` in the lane of `principal` and starts what fits. */
  enqueue(principal: string, item: T): void {
    this.#queue.push(principal, item);
    this.dispatch();
  }

  /** Takes a waiting item out of the queue; returns whether it was waiting. */
  remove(item: T): boolean {
    return this.#queue.delete(item);
  }

  /** A started item of `principal` ended its run: its slot is free. */
  finished(principal: string): void {
    this.#running--;
    const held = (this.#runningBy.get(principal) ?? 1) - 1;
    if (held > 0) this.#runningBy.set(principal, held);
    else this.#runningBy.delete(principal);
    this.dispatch();
  }

  /** Starts no more items (shutdown); running ones go on. */
  pause(): void {
    this.#paused = true;
  }

  /** Starts waiting items while slots are free. */
  dispatch(): void {
    while (!this.#paused && this.#running < this.#concurrency) {
      const next = this.#queue.shift(
        (principal) => (this.#runningBy.get(principal) ?? 0) < this.#maxRunning(principal),
      );
      if (next === undefined) return;
      this.#running++;
      this.#runningBy.set(next.principal, (this.#runningBy.get(next.principal) ?? 0) + 1);
      this.#start(next.item);
    }
  }
}
