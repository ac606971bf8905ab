import type { MciClient, ProcessSnapshot, ServerEvent, Subscription } from '@mci/client';

/** Processes per page of `process.list` the console reads. */
const PAGE_SIZE = 100;

/**
 * The processes the user may see, kept live: the newest page of `process.list` for the start, older
 * pages on {@link ProcessListStore.loadMore}, then `subscribe {all: true}` events (the client resumes
 * them with `since` after a reconnect, so none is lost). Updates are applied at once and announced at
 * most once per animation frame, so a burst of events costs one render.
 */
export class ProcessListStore {
  readonly #byPid = new Map<number, ProcessSnapshot>();
  readonly #listeners = new Set<() => void>();
  #order: number[] = [];
  /** Pids added since `#order` was last built. */
  #added: number[] = [];
  #version = 0;
  #frame: number | undefined;
  #subscription: Subscription | undefined;
  #client: MciClient | undefined;
  /** The `nextCursor` of the last page read; undefined once the oldest page is in. */
  #cursor: string | undefined;
  #loading = false;
  /** Set once the first list arrived. */
  ready = false;
  /** Why loading failed, if it did. */
  error: string | undefined;

  /** Starts following the processes `client` may see. */
  start(client: MciClient): void {
    this.#client = client;
    // Subscribe first: events racing the list reply are older than the list, which then wins.
    this.#subscription = client.subscribe({ all: true }, { onEvent: (event) => this.#apply(event) });
    void this.#read(undefined);
  }

  /** Whether older processes are left to load. */
  get hasMore(): boolean {
    return this.#cursor !== undefined;
  }

  /** Reads the next (older) page, if there is one and none is being read. */
  readonly loadMore = (): void => {
    if (this.#cursor !== undefined && !this.#loading) void this.#read(this.#cursor);
  };

  async #read(cursor: string | undefined): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.#loading = true;
    try {
      const page = await client.listProcesses({ limit: PAGE_SIZE, ...(cursor !== undefined && { cursor }) });
      // The page was read after the events that came before its reply: its copies win.
      for (const snapshot of page.items) this.#put(snapshot);
      this.#cursor = page.nextCursor;
      this.ready = true;
    } catch (error) {
      this.error = (error as Error).message;
    } finally {
      this.#loading = false;
      this.#announce();
    }
  }

  /** Stops following. */
  stop(): void {
    this.#subscription?.close();
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame);
    this.#listeners.clear();
  }

  /** A number that changes whenever the list changed (for `useSyncExternalStore`). */
  readonly version = (): number => this.#version;

  /** Calls `listener` after changes; returns a function that stops it. */
  readonly listen = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Every process, newest (highest pid) first. */
  all(): ProcessSnapshot[] {
    if (this.#added.length > 0) {
      const added = this.#added.sort((a, b) => b - a);
      // New processes normally have the highest pids: they go on top without sorting everything.
      this.#order =
        this.#order.length === 0 || added.at(-1)! > this.#order[0]!
          ? [...added, ...this.#order]
          : [...this.#byPid.keys()].sort((a, b) => b - a);
      this.#added = [];
    }
    return this.#order.map((pid) => this.#byPid.get(pid)!);
  }

  get size(): number {
    return this.#byPid.size;
  }

  #apply(event: ServerEvent): void {
    if (event.type !== 'process') return;
    const { type: _type, seq: _seq, ...snapshot } = event;
    this.#put(snapshot);
    this.#announce();
  }

  #put(snapshot: ProcessSnapshot): void {
    if (!this.#byPid.has(snapshot.pid)) this.#added.push(snapshot.pid);
    this.#byPid.set(snapshot.pid, snapshot);
  }

  #announce(): void {
    if (this.#frame !== undefined) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = undefined;
      this.#version++;
      for (const listener of this.#listeners) listener();
    });
  }
}
