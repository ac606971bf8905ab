import { type Abortable, followAbort, unfollowAbort } from '../abort.ts';
import type { RequestOwner } from './response-collector.ts';

/** The longest delay setTimeout takes as given. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Ends the requests whose time is up, from one timer for all of them (a setTimeout and clearTimeout
 * per request cost more than the rest of the deadline). The timer is due at the earliest deadline;
 * a request that finishes leaves it running, and when it fires it expires what is due and re-arms for
 * the next one (so with equal timeouts it fires about once per `timeoutMs`, not per request). It holds
 * the process open only while requests are pending.
 */
export class DeadlineTimer {
  readonly #pending = new Set<RequestDeadline>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer is due, as a `performance.now()` time; Infinity when it is not armed. */
  #due = Number.POSITIVE_INFINITY;

  /** Expires `deadline` at `deadline.expiresAt` unless it is removed first. */
  add(deadline: RequestDeadline): void {
    this.#pending.add(deadline);
    if (deadline.expiresAt < this.#due) this.#arm(deadline.expiresAt);
    else if (this.#pending.size === 1) this.#timer?.ref();
  }

  /** Stops watching `deadline`. */
  delete(deadline: RequestDeadline): void {
    if (this.#pending.delete(deadline) && this.#pending.size === 0) this.#timer?.unref();
  }

  /** Clears the timer (pending deadlines no longer expire). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#due = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#due = at;
    // A timer may run up to a millisecond early against performance.now(): #fire then re-arms. Past
    // 2^31-1 ms setTimeout would fire at once, so a longer wait is done in parts.
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(1, Math.ceil(at - performance.now())));
    this.#timer = setTimeout(this.#fire, delay);
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#due = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of this.#pending) {
      if (deadline.expiresAt <= now) {
        this.#pending.delete(deadline);
        deadline.expire();
      } else if (deadline.expiresAt < next) next = deadline.expiresAt;
    }
    if (next < Number.POSITIVE_INFINITY) this.#arm(next);
  };
}

/**
 * Ends one request when the caller's signal aborts or `timeoutMs` runs out (0: never), whichever
 * comes first; the bound covers the whole request, body included, and every dispatch it makes
 * (see {@link RequestOwner}). An AbortSignal is made only when asked for (for waits that are not
 * dispatches, like a token request).
 */
export class RequestDeadline implements RequestOwner, Abortable {
  /** When the time runs out, as a `performance.now()` time; Infinity without a timeout. */
  readonly expiresAt: number;
  #aborted = false;
  #expired = false;
  readonly #timer: DeadlineTimer | undefined;
  readonly #following: AbortSignal | undefined;
  #controller: AbortController | undefined;
  /** The dispatch running now. */
  #request: Abortable | undefined;

  /**
   * @param startedAt the `performance.now()` time the request started; `timeoutMs` counts from it.
   */
  constructor(
    signal: AbortSignal | undefined,
    timeoutMs: number,
    timer: DeadlineTimer,
    startedAt = performance.now(),
  ) {
    this.expiresAt = timeoutMs > 0 ? startedAt + timeoutMs : Number.POSITIVE_INFINITY;
    if (signal?.aborted) this.#aborted = true;
    else if (signal) {
      this.#following = signal;
      followAbort(signal, this);
    }
    if (timeoutMs > 0 && !this.#aborted) {
      this.#timer = timer;
      timer.add(this);
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

  /** Ends `request` with this deadline (at once if it has passed); `undefined` when it is over. */
  track(request: Abortable | undefined): void {
    this.#request = request;
    if (request && this.#aborted) request.abort(this.#reason());
  }

  /** Throws once the deadline has passed. */
  throwIfAborted(): void {
    if (this.#aborted) throw this.#reason();
  }

  /** Stops the timeout and stops following the caller's signal. */
  dispose(): void {
    this.#timer?.delete(this);
    if (this.#following) unfollowAbort(this.#following, this);
  }

  /** Called by the {@link DeadlineTimer} when the time is up. */
  expire(): void {
    if (this.#aborted) return;
    this.#expired = true;
    this.abort();
  }

  /** Ends the request (the caller's signal aborted, or the time is up). */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#request?.abort(this.#reason());
    this.#controller?.abort();
  }

  #reason(): Error {
    return new Error(this.#expired ? 'timed out' : 'aborted');
  }
}
