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
 * before their batch commits, so a mark is stored ahead of use, a block at a time, half a block
 * before it is reached: after a crash the counters continue past anything a client may have seen
 * (they may skip ahead by up to a block and a half; they never repeat).
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

  /**
   * Reserves a block of each past the last ids (before the first is handed out), so a mark is stored
   * ahead of every id from the start.
   */
  reserveAhead(): void {
    this.#reservedPid = this.#reserve('pid', this.#lastPid + PID_BLOCK);
    this.#reservedSeq = this.#reserve('seq', this.#lastSeq + SEQ_BLOCK);
  }

  /** Notes pid `pid` as handed out; the next block is reserved once half of the current one is used. */
  usePid(pid: number): void {
    if (pid > this.#lastPid) this.#lastPid = pid;
    if (pid > this.#reservedPid - PID_BLOCK / 2)
      this.#reservedPid = this.#reserve('pid', Math.max(pid, this.#reservedPid) + PID_BLOCK);
  }

  /** Notes seq `seq` as handed out; the next block is reserved once half of the current one is used. */
  useSeq(seq: number): void {
    if (seq > this.#lastSeq) this.#lastSeq = seq;
    if (seq > this.#reservedSeq - SEQ_BLOCK / 2)
      this.#reservedSeq = this.#reserve('seq', Math.max(seq, this.#reservedSeq) + SEQ_BLOCK);
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
