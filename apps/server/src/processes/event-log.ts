import type { DistributiveOmit, ServerEvent } from '@mci/protocol';
import type { Logger } from 'pino';
import type { EventListener } from './process-manager-types.ts';
import type { EventRoute, ProcessStore, StoredEvent, StoredEventFilter } from './process-store.ts';

/** A server event before it gets its `seq`. */
export type UnsequencedEvent = DistributiveOmit<ServerEvent, 'seq'>;

/**
 * The server's event log: one global, strictly increasing `seq` (continuing after the store's
 * highest), every event stored with its route for replay, then handed to every listener.
 *
 * On a store shared by a cluster the database orders the log: an event is stored under an id and
 * reaches the listeners once committed, with its position in the cluster's log as `seq`, together
 * with the events of the other nodes ({@link EventLog.deliver}).
 */
export class EventLog {
  readonly #store: ProcessStore;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<EventListener>();
  #lastSeq: number;

  constructor(store: ProcessStore, logger: Logger | undefined) {
    this.#store = store;
    this.#logger = logger;
    this.#lastSeq = store.cluster ? 0 : store.counters().lastSeq;
  }

  /** A cluster's log starts after the last event committed before this node listened. */
  startAt(lastSeq: number): void {
    this.#lastSeq = lastSeq;
  }

  /** The latest seq (0 if none yet). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /**
   * Gives `event` the next seq, runs `persist(seq)` (so readers see the data the event announces),
   * stores it, and notifies listeners (a listener that throws is logged and skipped).
   */
  emit(event: UnsequencedEvent, route: EventRoute, persist?: (seq: number) => void): void {
    const cluster = this.#store.cluster;
    const full = { ...event, seq: cluster ? cluster.nextEventId() : ++this.#lastSeq } as ServerEvent;
    persist?.(full.seq);
    this.#store.appendEvent(full, route);
    if (!cluster) this.#notify(full, route);
  }

  /** Hands events committed to a cluster's log (in order, `seq` = position) to the listeners. */
  deliver(events: StoredEvent[]): void {
    for (const { event, route } of events) {
      if (event.seq <= this.#lastSeq) continue;
      this.#lastSeq = event.seq;
      this.#notify(event, route);
    }
  }

  #notify(full: ServerEvent, route: EventRoute): void {
    for (const listener of this.#listeners) {
      try {
        listener(full, route);
      } catch (error) {
        this.#logger?.error({ err: error, seq: full.seq }, 'event listener failed');
      }
    }
  }

  /** Adds a listener; returns the function that removes it. */
  listen(listener: EventListener): () => void {
    // Wrap so the same function can be added twice and removed independently.
    const entry: EventListener = (event, route) => listener(event, route);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  /** Stored events with `seq > since` matching `filter`, in order. */
  async since(since: number, filter: StoredEventFilter): Promise<ServerEvent[]> {
    return (await this.#store.eventsSince(since, filter)).map((stored) => stored.event);
  }
}
