/** pids and seqs are reserved in blocks, so one never goes back after a crash. */
const PID_BLOCK = 32;
const SEQ_BLOCK = 1024;

/** Reads one-row, one-column queries (an SQLite connection, or the Postgres store's bridge). */
export interface CounterSource {
  prepare(sql: string): { get(): Record<string, unknown> | undefined };
}

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

  /** Continues after the stored marks and the largest pid and seq in `db`. */
  constructor(db: CounterSource, store: StoreCounter) {
    this.#store = store;
    const value = (sql: string) => Number(Object.values(db.prepare(sql).get() ?? {})[0] ?? 0);
    this.#lastPid = this.#reservedPid = Math.max(
      value("SELECT value FROM counters WHERE name = 'pid'"),
      value('SELECT max(pid) FROM processes'),
    );
    this.#lastSeq = this.#reservedSeq = Math.max(
      value("SELECT value FROM counters WHERE name = 'seq'"),
      value('SELECT max(seq) FROM events'),
      value('SELECT max(seq) FROM outputs'),
      value('SELECT max(seq) FROM logs'),
    );
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
