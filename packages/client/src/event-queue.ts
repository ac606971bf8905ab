interface Waiter<T> {
  resolve(result: IteratorResult<T>): void;
  reject(error: unknown): void;
}

/**
 * An unbounded single-consumer queue read as an async iterator: `push` from the connection,
 * `for await` in the caller. `end` finishes the iteration after the queued items; `fail` throws the
 * error after them. Leaving the loop early (`break`, `return`, a throw) calls `onReturn` once.
 */
export class EventQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = [];
  readonly #waiters: Waiter<T>[] = [];
  #finished = false;
  #error: { error: unknown } | undefined;
  readonly #onReturn: (() => void) | undefined;

  constructor(onReturn?: () => void) {
    this.#onReturn = onReturn;
  }

  /** True once `end` or `fail` was called (items may still be queued). */
  get finished(): boolean {
    return this.#finished;
  }

  push(item: T): void {
    if (this.#finished) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve({ value: item, done: false });
    else this.#items.push(item);
  }

  end(): void {
    if (this.#finished) return;
    this.#finished = true;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve({ value: undefined, done: true });
  }

  fail(error: unknown): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#error = { error };
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
    if (this.#error) {
      const { error } = this.#error;
      this.#error = undefined; // thrown once; later calls just report done
      return Promise.reject(error);
    }
    if (this.#finished) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    const wasOpen = !this.#finished;
    this.#items.length = 0;
    this.#error = undefined;
    this.end();
    if (wasOpen) this.#onReturn?.();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
