import type { Kysely } from 'kysely';
import pg from 'pg';
import type { StoredEvent } from '../processes/process-store.ts';
import { readLogPage } from '../store/sql/event-reads.ts';
import type { Database } from '../store/sql/tables.ts';

/** Rows of the event log fetched per query. */
const EVENT_PAGE = 1000;

/** A message to one node: `kill PID`, `offer NODE SLOTS` or `take PID,PID,...`. */
export type NodeRequest =
  | { type: 'kill'; pid: number }
  | { type: 'offer'; node: string; slots: number }
  | { type: 'take'; pids: number[] };

/** What the bus hears. */
export interface NodeBusHandlers {
  /** Events committed by any node, in log order (`nodes[i]`: the node that committed `events[i]`). */
  events(events: StoredEvent[], nodes: string[]): void;
  /** A node announced more queued processes than free slots. */
  surplus(node: string): void;
  request(request: NodeRequest): void;
}

/** The notification channel of node `name` (at most 63 bytes: names are at most 50). */
export const nodeChannel = (name: string) => `mci_node:${name}`;

/**
 * A cluster node's connection for `LISTEN`: committed events (`mci_events`, then the log rows after
 * the last position delivered are read and handed over in order), surplus announcements
 * (`mci_surplus`) and requests to this node (`mci_node:NAME`). A poll every second catches up after a
 * lost notification or a reconnection; a dropped connection is opened again.
 * @see https://www.postgresql.org/docs/current/sql-listen.html
 */
export class NodeBus {
  readonly #url: string;
  readonly #db: Kysely<Database>;
  readonly #name: string;
  readonly #handlers: NodeBusHandlers;
  readonly #connectMs: number;
  #client: pg.Client | undefined;
  #lastPos = 0;
  #fetching = false;
  #fetchAgain = false;
  #poll: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(url: string, db: Kysely<Database>, name: string, handlers: NodeBusHandlers, connectMs: number) {
    this.#url = url;
    this.#db = db;
    this.#name = name;
    this.#handlers = handlers;
    this.#connectMs = connectMs;
  }

  /** Starts listening. @returns the position of the last event committed before. */
  async start(): Promise<number> {
    await this.#listen();
    const row = await this.#db
      .selectFrom('counters')
      .select('value')
      .where('name', '=', 'pos')
      .executeTakeFirst();
    this.#lastPos = Number(row?.value ?? 0);
    this.#poll = setInterval(() => void this.fetch(), 1000);
    this.#poll.unref();
    return this.#lastPos;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    await this.#client?.end().catch(() => {});
  }

  /** Hands over every committed event after the last position delivered, a page at a time. */
  async fetch(): Promise<void> {
    if (this.#fetching) {
      this.#fetchAgain = true;
      return;
    }
    this.#fetching = true;
    try {
      do {
        this.#fetchAgain = false;
        for (;;) {
          const page = await readLogPage(this.#db, this.#lastPos, EVENT_PAGE);
          if (page.events.length > 0) this.#handlers.events(page.events, page.nodes);
          if (page.lastPos <= this.#lastPos) break;
          this.#lastPos = page.lastPos;
        }
      } while (this.#fetchAgain && !this.#closed);
    } catch {
      // The database is away: the next notification or poll reads again from the last position.
    } finally {
      this.#fetching = false;
    }
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: this.#connectMs });
    client.on('error', () => {});
    await client.connect();
    await client.query(
      `LISTEN mci_events; LISTEN mci_surplus; LISTEN ${client.escapeIdentifier(nodeChannel(this.#name))}`,
    );
    client.on('notification', (message) => {
      if (message.channel === 'mci_events') void this.fetch();
      else if (message.channel === 'mci_surplus') {
        if (message.payload && message.payload !== this.#name) this.#handlers.surplus(message.payload);
      } else {
        const request = parseRequest(message.payload ?? '');
        if (request) this.#handlers.request(request);
      }
    });
    client.once('end', () => {
      if (this.#client !== client || this.#closed) return;
      this.#client = undefined;
      void this.#relisten();
    });
    this.#client = client;
  }

  async #relisten(): Promise<void> {
    for (let wait = 100; this.#client === undefined && !this.#closed; wait = Math.min(wait * 2, 2000)) {
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      try {
        await this.#listen();
        void this.fetch();
      } catch {
        // The database is still away: try again.
      }
    }
  }
}

function parseRequest(payload: string): NodeRequest | undefined {
  const [verb, first, second] = payload.split(' ');
  if (verb === 'kill') return { type: 'kill', pid: Number(first) };
  if (verb === 'offer' && first) return { type: 'offer', node: first, slots: Number(second) };
  if (verb === 'take' && first) return { type: 'take', pids: first.split(',').map(Number) };
  return undefined;
}
