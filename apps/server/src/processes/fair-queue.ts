/**
 * A queue that is FIFO per principal and round-robin across principals: `shift()` takes the oldest
 * item of the principal whose turn it is, then moves that principal to the back of the ring. A
 * principal that submits 1,000 items therefore waits its turn like one that submits a single item.
 *
 * `delete(item)` is O(1): removed items are skipped lazily when their lane reaches them.
 */
export class FairQueue<T> {
  readonly #lanes = new Map<string, { items: Array<T | undefined>; head: number }>();
  /** Principals with items, in turn order. */
  readonly #ring: string[] = [];
  readonly #members = new Set<T>();

  /** Items waiting (deleted ones not counted). */
  get length(): number {
    return this.#members.size;
  }

  has(item: T): boolean {
    return this.#members.has(item);
  }

  /** Appends `item` to the lane of `principal`. */
  push(principal: string, item: T): void {
    if (this.#members.has(item)) return;
    this.#members.add(item);
    let lane = this.#lanes.get(principal);
    if (!lane) {
      lane = { items: [], head: 0 };
      this.#lanes.set(principal, lane);
      this.#ring.push(principal);
    }
    lane.items.push(item);
  }

  /** Removes `item` wherever it is; returns whether it was queued. */
  delete(item: T): boolean {
    return this.#members.delete(item);
  }

  /**
   * The next item in fair order of a principal that `eligible` accepts (every one by default), with
   * its principal, or `undefined` when there is none. Principals passed over keep their turn.
   */
  shift(eligible: (principal: string) => boolean = () => true): { item: T; principal: string } | undefined {
    for (let i = 0; i < this.#ring.length; ) {
      const principal = this.#ring[i]!;
      if (!eligible(principal)) {
        i++;
        continue;
      }
      const lane = this.#lanes.get(principal)!;
      const item = this.#take(lane);
      this.#ring.splice(i, 1);
      if (item === undefined) {
        this.#lanes.delete(principal);
        continue;
      }
      if (this.#peekLive(lane)) this.#ring.push(principal);
      else this.#lanes.delete(principal);
      return { item, principal };
    }
    return undefined;
  }

  /** Every queued item, oldest first. */
  values(): T[] {
    return [...this.#members];
  }

  #take(lane: { items: Array<T | undefined>; head: number }): T | undefined {
    while (lane.head < lane.items.length) {
      const item = lane.items[lane.head] as T;
      // A taken slot lets go of its item: a long lane must not keep every finished item alive.
      lane.items[lane.head++] = undefined;
      if (this.#members.delete(item)) {
        this.#compact(lane);
        return item;
      }
    }
    return undefined;
  }

  #peekLive(lane: { items: Array<T | undefined>; head: number }): boolean {
    while (lane.head < lane.items.length) {
      if (this.#members.has(lane.items[lane.head] as T)) return true;
      lane.items[lane.head++] = undefined;
    }
    this.#compact(lane);
    return false;
  }

  #compact(lane: { items: Array<T | undefined>; head: number }): void {
    if (lane.head > 1024 && lane.head * 2 > lane.items.length) {
      lane.items.splice(0, lane.head);
      lane.head = 0;
    }
  }
}
