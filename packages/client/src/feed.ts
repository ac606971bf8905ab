import type { ServerEvent, SubscriptionTarget } from '@mci/protocol';
import type { ClientError } from './client-error.ts';
import { EventQueue } from './event-queue.ts';

/**
 * A subscription of this client: the events of one target (a process, a ref, a stream, or all), each
 * exactly once and in `seq` order, across reconnects. Iterate it (`for await`) unless it was made with
 * an `onEvent` callback; close it (or leave the loop) to stop following.
 */
export interface Subscription extends AsyncIterable<ServerEvent> {
  readonly target: SubscriptionTarget;
  /** Resolves once the server confirmed the subscription (and replayed what `since` asked for). */
  readonly ready: Promise<void>;
  /** The seq of the last event delivered (or the point the subscription started from). */
  readonly lastSeq: number;
  /** Stops following; an iteration in progress ends. */
  close(): void;
  [Symbol.dispose](): void;
}

/** Options of `client.subscribe`. */
export interface SubscribeOptions {
  /**
   * Replay stored events with `seq > since` before live ones (`0`: everything the server still
   * holds). Without it, only events after the subscription are delivered.
   */
  since?: number;
  /** Called with each event, in order; the subscription then does not buffer events for iteration. */
  onEvent?: (event: ServerEvent) => void;
  /** Called after each event; returning true ends the subscription after that event. */
  until?: (event: ServerEvent) => boolean;
}

/** What a {@link Feed} needs from the registry that owns it (the client's `FeedRegistry`). */
export interface FeedOwner {
  release(feed: Feed): void;
}

/**
 * The client side of one subscription. The server delivers events of a target in `seq` order after
 * a subscribe reply, with replays (from `since`) before that reply; so the feed buffers while its
 * subscribe request is in flight, then delivers the buffer sorted and without repeats, and afterwards
 * drops anything at or below the last seq it delivered (a repeat from an overlapping replay).
 */
export class Feed implements Subscription {
  readonly target: SubscriptionTarget;
  readonly ready: Promise<void>;
  /** Subscribe requests sent for this feed; replies to older ones are ignored. */
  generation = 0;
  /** A stream feed whose `stream.start` is not answered yet (the start itself will subscribe). */
  awaitingStart = false;
  #lastSeq: number | undefined;
  #pending = false;
  #buffer: ServerEvent[] = [];
  #closed = false;
  readonly #owner: FeedOwner;
  readonly #queue: EventQueue<ServerEvent> | undefined;
  readonly #onEvent: ((event: ServerEvent) => void) | undefined;
  readonly #until: ((event: ServerEvent) => boolean) | undefined;
  readonly #onEnd: ((error?: ClientError) => void) | undefined;
  #resolveReady!: () => void;
  #rejectReady!: (error: ClientError) => void;

  /** `startSeq`: deliver only events after it; undefined means "from when the server confirms". */
  constructor(
    owner: FeedOwner,
    target: SubscriptionTarget,
    options: SubscribeOptions & { onEnd?: (error?: ClientError) => void },
    startSeq: number | undefined,
  ) {
    this.#owner = owner;
    this.#onEnd = options.onEnd;
    this.target = target;
    this.#lastSeq = startSeq;
    this.#onEvent = options.onEvent;
    this.#until = options.until;
    this.#queue = options.onEvent ? undefined : new EventQueue<ServerEvent>(() => this.close());
    this.ready = new Promise((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.ready.catch(() => {}); // the error also ends the iteration; awaiting ready is optional
  }

  get lastSeq(): number {
    return this.#lastSeq ?? 0;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Marks the feed as already followed by the server (a stream it started, a process it created). */
  confirmedImplicitly(): void {
    this.#resolveReady();
  }

  /** A subscribe request is going out: buffer until its reply. Returns the `since` to send. */
  beginSubscribe(): number | undefined {
    this.#pending = true;
    this.generation++;
    return this.#lastSeq;
  }

  /**
   * The server confirmed the subscription; `seq` is the latest seq it had issued then. The buffer holds
   * the replay (events after `since`), events the connection had from other subscriptions, and
   * possibly live events read before this call: delivered sorted, each once, after the start point.
   */
  confirmed(seq: number): void {
    if (this.#closed) return;
    this.#pending = false;
    const buffered = this.#buffer.sort((a, b) => a.seq - b.seq);
    this.#buffer = [];
    // Live only: nothing from before the subscription point.
    this.#lastSeq ??= seq;
    for (const event of buffered) {
      if (this.#closed) return;
      this.accept(event);
    }
    this.#lastSeq = Math.max(this.#lastSeq, seq);
    this.#resolveReady();
  }

  /** An event that belongs to this feed's target. */
  accept(event: ServerEvent): void {
    if (this.#closed) return;
    if (this.#pending) {
      this.#buffer.push(event);
      return;
    }
    if (this.#lastSeq !== undefined && event.seq <= this.#lastSeq) return;
    this.#lastSeq = event.seq;
    if (this.#onEvent) {
      try {
        this.#onEvent(event);
      } catch (error) {
        // A listener's bug must not break the connection: report it like an uncaught exception.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.#queue?.push(event);
    if (this.#until?.(event)) this.close();
  }

  /** Ends the feed with an error (subscription refused, connection lost for good). */
  fail(error: ClientError): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#rejectReady(error);
    this.#queue?.fail(error);
    this.#owner.release(this);
    this.#onEnd?.(error);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#resolveReady();
    this.#queue?.end();
    this.#owner.release(this);
    this.#onEnd?.();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<ServerEvent> {
    if (!this.#queue)
      throw new TypeError('this subscription delivers to its onEvent callback; it cannot be iterated');
    return this.#queue;
  }
}
