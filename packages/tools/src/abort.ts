/** Something that can be ended, like an `AbortController`. */
export interface Abortable {
  abort(reason?: unknown): void;
}

// One DOM listener per signal, however many targets follow it (the runner's lifetime signal is
// shared by every execution without a caller signal of its own).
const followers = new WeakMap<AbortSignal, Set<Abortable>>();

/**
 * Aborts `target` with the signal's reason when `signal` aborts, until {@link unfollowAbort}. A
 * signal gets one listener for all its followers: adding and removing a DOM listener per request
 * costs more than the rest of the bookkeeping, and the signal never collects stale listeners.
 */
export function followAbort(signal: AbortSignal, target: Abortable): void {
  let targets = followers.get(signal);
  if (!targets) {
    const set = new Set<Abortable>();
    targets = set;
    followers.set(signal, set);
    signal.addEventListener('abort', () => {
      for (const each of set) each.abort(signal.reason);
      set.clear();
    });
  }
  targets.add(target);
}

/** Stops `target` following `signal`. */
export function unfollowAbort(signal: AbortSignal, target: Abortable): void {
  followers.get(signal)?.delete(target);
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as `signal` aborts, whichever
 * comes first. The promise keeps running; its own cleanup is the caller's business.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
