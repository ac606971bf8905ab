/**
 * Updates of rows waiting in the write batch, merged by key (a pid, or `pid:run`): the write happens
 * once, at the place of the first, with the fields of all (later writes of other rows do not depend on
 * it), so a burst of state changes of one process costs one `UPDATE`.
 */
export class UpdateCoalescer<K, T extends object> {
  readonly #pending = new Map<K, T>();
  readonly #enqueue: (write: () => void) => void;
  readonly #merge: (waiting: T, update: T) => void;

  /**
   * `enqueue` adds a write to the current batch (and throws when the store is closed); `merge` folds
   * a later update into the waiting one. @default merge: the later fields win (`Object.assign`)
   */
  constructor(
    enqueue: (write: () => void) => void,
    merge: (waiting: T, update: T) => void = (waiting, update) => Object.assign(waiting, update),
  ) {
    this.#enqueue = enqueue;
    this.#merge = merge;
  }

  /** Queues `update` of `key`, or merges it into the one waiting; `write` gets the merged fields. */
  add(key: K, update: T, write: (merged: T) => void): void {
    const waiting = this.#pending.get(key);
    if (waiting) {
      this.#merge(waiting, update);
      return;
    }
    const merged = { ...update };
    this.#pending.set(key, merged);
    this.#enqueue(() => {
      if (this.#pending.get(key) === merged) this.#pending.delete(key);
      write(merged);
    });
  }

  /** Later updates of `key` start a new write (one queued after a write that replaces the row). */
  forget(key: K): void {
    this.#pending.delete(key);
  }

  /** Forgets every waiting update (their batch is gone). */
  clear(): void {
    this.#pending.clear();
  }
}
