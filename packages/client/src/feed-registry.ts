/**
 * The feeds a client follows and their server subscriptions: subscribed once each, again after a
 * reconnect or an overflow, unsubscribed when the last feed of a target stops, ended when the
 * connection closes for good.
 */
import type { ServerEvent } from '@mci/protocol';
import type { ClientError } from './client-error.ts';
import type { Connection } from './connection.ts';
import { eventMatches, targetKey } from './event-target.ts';
import type { Feed, FeedOwner } from './feed.ts';

/**
 * The live {@link Feed}s of one connection. The connection's events are routed to every feed whose
 * target they match; a feed that stops comes back through {@link FeedRegistry.release}.
 */
export class FeedRegistry implements FeedOwner {
  readonly #connection: Connection;
  readonly #feeds = new Set<Feed>();

  constructor(connection: Connection) {
    this.#connection = connection;
  }

  /**
   * Follows `feed` (made with this registry as its owner): subscribes it at once unless it is
   * `awaitingStart` (a stream feed, which its `stream.start` subscribes).
   */
  add(feed: Feed): void {
    this.#feeds.add(feed);
    if (!feed.awaitingStart) this.#subscribe(feed);
  }

  /** A feed stopped: stop the server subscription when no other feed follows its target. */
  release(feed: Feed): void {
    if (!this.#feeds.delete(feed)) return;
    const key = targetKey(feed.target);
    for (const other of this.#feeds) if (targetKey(other.target) === key) return;
    if (this.#connection.state !== 'open') return; // a new connection starts with no subscriptions
    this.#connection.request({ type: 'unsubscribe', ...feed.target }).catch(() => {});
  }

  /** Subscribes every feed again from its last seq (a new connection, or events the server dropped). */
  resubscribeAll(): void {
    for (const feed of this.#feeds) if (!feed.awaitingStart) this.#subscribe(feed);
  }

  /** Hands `event` to every feed whose target it matches. */
  route(event: ServerEvent): void {
    for (const feed of [...this.#feeds]) if (eventMatches(feed.target, event)) feed.accept(event);
  }

  /**
   * The connection closed for good: every feed ends, closed when `error` is absent or `CLOSED`,
   * failed with `error` otherwise.
   */
  endAll(error?: ClientError): void {
    for (const feed of [...this.#feeds]) {
      if (error === undefined || error.code === 'CLOSED') feed.close();
      else feed.fail(error);
    }
  }

  #subscribe(feed: Feed): void {
    const since = feed.beginSubscribe();
    const generation = feed.generation;
    const message = { type: 'subscribe' as const, ...feed.target, ...(since !== undefined && { since }) };
    // Confirmed as the reply is read, so that a notice right behind it (overflow) sees the feed current.
    const onResult = (result: { seq: number }) => {
      if (feed.generation === generation) feed.confirmed(result.seq);
    };
    this.#connection.request(message, { onResult }).catch((error: ClientError) => {
      if (feed.generation !== generation) return;
      // Lost with the connection: the reconnect subscribes again from the feed's last seq.
      if (error.code === 'DISCONNECTED' && this.#connection.state !== 'closed') return;
      feed.fail(error);
    });
  }
}
