import { EventEmitter } from 'node:events';

// One DOM listener per caller signal, however many requests follow it (the runner's lifetime
// signal is shared by every execution without a caller signal of its own).
const followers = new WeakMap<AbortSignal, Set<() => void>>();

function follow(signal: AbortSignal, listener: () => void): () => void {
  let listeners = followers.get(signal);
  if (!listeners) {
    const set = new Set<() => void>();
    listeners = set;
    followers.set(signal, set);
    signal.addEventListener('abort', () => {
      for (const each of set) each();
      set.clear();
    });
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Ends one request when the caller's signal aborts or `timeoutMs` runs out (0: never), whichever
 * comes first; the bound covers the whole request, body included.
 *
 * undici takes an EventEmitter that emits `abort` in place of an AbortSignal (see `signal` in
 * `Dispatcher.RequestOptions`); it listens to it with a plain `once`, where an AbortSignal goes
 * through Node's `addAbortListener` on every request. An AbortSignal is made only when asked for.
 */
export class RequestDeadline {
  /** Pass as undici's `signal`. Has no `aborted` property (undici would take it for an AbortSignal). */
  readonly emitter = new EventEmitter();
  #aborted = false;
  #expired = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #unfollow: (() => void) | undefined;
  #controller: AbortController | undefined;

  constructor(signal: AbortSignal | undefined, timeoutMs: number) {
    if (signal?.aborted) this.#abort();
    else if (signal) this.#unfollow = follow(signal, () => this.#abort());
    if (timeoutMs > 0 && !this.#aborted) {
      this.#timer = setTimeout(() => {
        this.#expired = true;
        this.#abort();
      }, timeoutMs);
    }
  }

  /** Whether the time ran out (rather than the caller aborting). */
  get timedOut(): boolean {
    return this.#expired;
  }

  /** An AbortSignal that follows this deadline, for waits that are not undici requests. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /**
   * Throws once the deadline has passed: undici cannot see an earlier abort on an emitter, so check
   * before each request.
   */
  throwIfAborted(): void {
    if (this.#aborted) throw new Error(this.#expired ? 'timed out' : 'aborted');
  }

  /** Clears the timer and stops following the caller's signal. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#unfollow?.();
  }

  #abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.emitter.emit('abort');
    this.#controller?.abort();
  }
}
