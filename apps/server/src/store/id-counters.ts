/** pids and seqs are reserved in blocks, so one never goes back after a crash. */
const PID_BLOCK = 32;
const SEQ_BLOCK = 1024;

/**
 * The one-value queries whose largest answer each counter continues after: its stored mark and the
 * largest id in the tables that hold it.
 */
export const COUNTER_QUERIES = {
  pid: ["SELECT value FROM counters WHERE name = 'pid'", 'SELECT max(pid) FROM processes'],
  seq: [
    "SELECT value FROM counters WHERE name = 'seq'",
    'SELECT max(seq) FROM events',
    'SELECT max(seq) FROM outputs',
    'SELECT max(seq) FROM logs',
  ],
} as const;

/** Stores a counter's high-water mark on disk at once (outside the write batch). */
export type StoreCounter = (name: 'pid' | 'seq', value: number) => void;

/**
 * The last pid and event seq handed out, and their high-water marks on disk. Events reach clients
 * before their batch commits, so a mark is stored ahead of use, a block at a time: after a crash the
 * counters continue past anything a client may have seen (they may skip ahead; they never repeat).
 */
export class IdCounters {
  readonly #store: StoreCounter;
  #lastPid: number;
  #lastSeq: number;
  #reservedPid: number;
  #reservedSeq: number;

  /**
   * Continues after `last`: the largest answers of {@link COUNTER_QUERIES} of the database.
   * `store` writes a mark (at once on SQLite; queued ahead of later batches on PostgreSQL).
   */
  constructor(last: { lastPid: number; lastSeq: number }, store: StoreCounter) {
    this.#store = store;
    this.#lastPid = this.#reservedPid = last.lastPid;
    this.#lastSeq = this.#reservedSeq = last.lastSeq;
  }

  get last(): { lastPid: number; lastSeq: number } {
    return { lastPid: this.#lastPid, lastSeq: this.#lastSeq };
  }

  usePid(pid: number): void {
    if (pid > this.#lastPid) this.#lastPid = pid;
    if (pid > this.#reservedPid) this.#reservedPid = this.#reserve('pid', pid + PID_BLOCK - 1);
  }

  useSeq(seq: number): void {
    if (seq > this.#lastSeq) this.#lastSeq = seq;
    if (seq > this.#reservedSeq) this.#reservedSeq = this.#reserve('seq', seq + SEQ_BLOCK - 1);
  }

  /** A clean stop: the next start continues exactly after the last pid and seq handed out. */
  storeExact(): void {
    this.#reserve('pid', this.#lastPid);
    this.#reserve('seq', this.#lastSeq);
  }

  #reserve(name: 'pid' | 'seq', value: number): number {
    this.#store(name, value);
    return value;
  }
}
