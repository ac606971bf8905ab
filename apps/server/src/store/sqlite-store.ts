import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  ProcessStore,
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from '../processes/process-store.ts';
import { DEFAULT_DB_PATH, openDatabase } from './open-database.ts';
import {
  decodeValue,
  encodeValue,
  EVENT_ROW,
  LOG_ROW,
  OUTPUT_ROW,
  PROCESS_COLUMNS,
  processRow,
  runAssignments,
  toProcess,
  toRun,
  toStoredEvent,
} from './row-codec.ts';
import { StoreError } from './store-error.ts';
import { WriteBatcher } from './write-batcher.ts';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** Database file (created with its directory), or `:memory:` for a throwaway one. @default './.mci/mci.db' */
  path?: string;
  /**
   * How long (ms) writes wait to be committed together; 0 commits once per event-loop turn. Reads
   * commit pending writes first, so they always see them. @default 0
   */
  flushDelayMs?: number;
  /** How long (ms) to wait for a database another process holds before `STORE_LOCKED`. @default 2000 */
  busyTimeoutMs?: number;
  /** A batch of writes failed (disk full, I/O error) and was rolled back. @default a process warning */
  onError?: (error: unknown) => void;
}

/** What {@link SqliteProcessStore.expiredProcesses} selects. */
export interface ExpiryPolicy {
  /** Idle processes whose last state change is older than this (ms) expire. */
  maxAgeMs: number;
  /** Past this many processes, the idle ones whose last change is oldest expire. */
  maxProcesses: number;
  /** Most pids returned. */
  limit: number;
  /** ms since the epoch. @default Date.now() */
  now?: number;
}

/** The SQLite {@link ProcessStore}, with what retention and tests need on top. */
export interface SqliteProcessStore extends ProcessStore {
  /** Absolute file path, or `:memory:`. */
  readonly path: string;
  /** Schema version found when opening (0: a new database) and the version now. */
  readonly schema: { from: number; to: number };
  /** Commits pending writes now. */
  flush(): void;
  /** Idle processes to delete, oldest change first (never a queued, running or terminating one). */
  expiredProcesses(policy: ExpiryPolicy): number[];
  /** Deletes events that belong to no process (intents, stream results) older than `beforeMs` (epoch ms). */
  deleteUnownedEvents(beforeMs: number): void;
}

/** pids and seqs are reserved in blocks, so one never goes back after a crash (see counters()). */
const PID_BLOCK = 32;
const SEQ_BLOCK = 1024;

/**
 * Opens the durable process store: SQLite (Node's built-in `node:sqlite`) in WAL mode. Writes are
 * batched into one transaction per event-loop turn (or `flushDelayMs`); reads commit what is pending
 * first. Output values and logs are stored once, with their event `seq`.
 *
 * pids and seqs handed out are reserved on disk ahead of use in small blocks, so after a crash the
 * counters continue past anything a client may have seen (they may skip ahead; they never repeat).
 * After a clean {@link ProcessStore.close} they continue exactly.
 * @throws StoreError when the database cannot be opened (see {@link openDatabase}).
 */
export function openSqliteStore(options: SqliteStoreOptions = {}): SqliteProcessStore {
  const { db, path, schema } = openDatabase(options.path ?? DEFAULT_DB_PATH, {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
  return new SqliteStore(db, path, schema, options);
}

class SqliteStore implements SqliteProcessStore {
  readonly path: string;
  readonly schema: { from: number; to: number };
  readonly #db: DatabaseSync;
  readonly #batch: WriteBatcher;
  readonly #statements = new Map<string, StatementSync>();
  #lastPid: number;
  #lastSeq: number;
  #reservedPid: number;
  #reservedSeq: number;
  /** The last output or log written, so its event is not stored a second time. */
  #lastData: { seq: number; pid: number; run: number } | undefined;
  #closed = false;

  constructor(
    db: DatabaseSync,
    path: string,
    schema: { from: number; to: number },
    options: SqliteStoreOptions,
  ) {
    this.#db = db;
    this.path = path;
    this.schema = schema;
    const onError =
      options.onError ??
      ((error: unknown) =>
        process.emitWarning(`process store: a batch of writes was lost: ${String(error)}`));
    this.#batch = new WriteBatcher(db, { flushDelayMs: options.flushDelayMs ?? 0, onError });
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

  counters() {
    return { lastPid: this.#lastPid, lastSeq: this.#lastSeq };
  }

  putProcess(record: StoredProcess): void {
    const row = processRow(record, Date.now());
    this.#write(
      `INSERT OR REPLACE INTO processes (${PROCESS_COLUMNS.join(', ')}) VALUES (${PROCESS_COLUMNS.map(() => '?').join(', ')})`,
      row,
    );
    if (record.pid > this.#lastPid) this.#lastPid = record.pid;
    if (record.pid > this.#reservedPid) this.#reservedPid = this.#reserve('pid', record.pid + PID_BLOCK - 1);
  }

  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void {
    this.#write('UPDATE processes SET state = ?, status = ?, runs = ?, changed_at = ? WHERE pid = ?', [
      update.state,
      update.status,
      update.runs,
      Date.now(),
      pid,
    ]);
  }

  getProcess(pid: number): StoredProcess | undefined {
    const row = this.#read('SELECT * FROM processes WHERE pid = ?').get(pid);
    return row && toProcess(row as Parameters<typeof toProcess>[0]);
  }

  listProcesses(filter: StoredProcessFilter): StoredProcess[] {
    const where: string[] = [];
    const params: Array<string | null> = [];
    if (filter.owner !== undefined) where.push('owner = ?') && params.push(filter.owner);
    if (filter.state !== undefined) where.push('state = ?') && params.push(filter.state);
    if (filter.status === null) where.push('status IS NULL');
    else if (filter.status !== undefined) where.push('status = ?') && params.push(filter.status);
    if (filter.ref !== undefined) where.push('ref = ?') && params.push(filter.ref);
    const sql = `SELECT * FROM processes${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY pid DESC`;
    return this.#read(sql)
      .all(...params)
      .map((row) => toProcess(row as Parameters<typeof toProcess>[0]));
  }

  deleteProcess(pid: number): void {
    for (const table of ['processes', 'runs', 'outputs', 'logs', 'events'])
      this.#write(`DELETE FROM ${table} WHERE pid = ?`, [pid]);
  }

  insertRun(pid: number, run: number, init: Parameters<ProcessStore['insertRun']>[2]): void {
    const { columns, values } = runAssignments({ state: 'queued', status: null, ...init });
    this.#write(
      `INSERT OR REPLACE INTO runs (pid, run, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')})`,
      [pid, run, ...values],
    );
  }

  updateRun(pid: number, run: number, update: Parameters<ProcessStore['updateRun']>[2]): void {
    const { columns, values } = runAssignments(update);
    if (columns.length === 0) return;
    this.#write(`UPDATE runs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE pid = ? AND run = ?`, [
      ...values,
      pid,
      run,
    ]);
  }

  appendOutput(pid: number, run: number, seq: number, value: unknown): void {
    this.#write('INSERT OR REPLACE INTO outputs (seq, pid, run, value) VALUES (?, ?, ?, ?)', [
      seq,
      pid,
      run,
      encodeValue(value),
    ]);
    this.#data(seq, pid, run);
  }

  appendLog(pid: number, run: number, seq: number, stream: 'stdout' | 'stderr', text: string): void {
    this.#write('INSERT OR REPLACE INTO logs (seq, pid, run, stream, text) VALUES (?, ?, ?, ?, ?)', [
      seq,
      pid,
      run,
      stream,
      text,
    ]);
    this.#data(seq, pid, run);
  }

  getRun(pid: number, run: number): StoredRun | undefined {
    const row = this.#read('SELECT * FROM runs WHERE pid = ? AND run = ?').get(pid, run);
    if (!row) return undefined;
    const outputs = this.#read('SELECT value FROM outputs WHERE pid = ? AND run = ? ORDER BY seq')
      .all(pid, run)
      .map((output) => decodeValue(output.value as Uint8Array));
    const logs = this.#read('SELECT stream, text FROM logs WHERE pid = ? AND run = ? ORDER BY seq').all(
      pid,
      run,
    );
    return toRun(row as Parameters<typeof toRun>[0], outputs, logs as Parameters<typeof toRun>[2]);
  }

  appendEvent(
    event: Parameters<ProcessStore['appendEvent']>[0],
    route: Parameters<ProcessStore['appendEvent']>[1],
  ): void {
    this.#seq(event.seq);
    const data = this.#lastData;
    // An output or log event whose data was just written with its seq is rebuilt from it on replay.
    if (
      (event.type === 'output' || event.type === 'log') &&
      data?.seq === event.seq &&
      data.pid === event.pid
    )
      return;
    this.#write(
      'INSERT OR REPLACE INTO events (seq, owner, pid, ref, stream_id, at, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [
        event.seq,
        route.owner,
        route.pid ?? null,
        route.ref ?? null,
        route.streamId ?? null,
        Date.now(),
        JSON.stringify(event),
      ],
    );
  }

  eventsSince(since: number, filter: StoredEventFilter): StoredEvent[] {
    const where = (alias: string, owned: string) => {
      const parts = [`${alias}.seq > :since`];
      if (filter.owner !== undefined) parts.push(`${owned}.owner = :owner`);
      if (filter.pid !== undefined) parts.push(`${alias}.pid = :pid`);
      if (filter.ref !== undefined) parts.push(`${owned}.ref = :ref`);
      return parts.join(' AND ');
    };
    const sql = `
      SELECT e.seq, ${EVENT_ROW} AS kind, e.body AS data, NULL AS stream, e.owner, e.pid, e.ref, e.stream_id, NULL AS run
        FROM events e WHERE ${where('e', 'e')}
      UNION ALL
      SELECT o.seq, ${OUTPUT_ROW}, o.value, NULL, p.owner, o.pid, p.ref, p.stream_id, o.run
        FROM outputs o JOIN processes p ON p.pid = o.pid WHERE ${where('o', 'p')}
      UNION ALL
      SELECT l.seq, ${LOG_ROW}, l.text, l.stream, p.owner, l.pid, p.ref, p.stream_id, l.run
        FROM logs l JOIN processes p ON p.pid = l.pid WHERE ${where('l', 'p')}
      ORDER BY seq`;
    const params: Record<string, string | number> = { since };
    if (filter.owner !== undefined) params.owner = filter.owner;
    if (filter.pid !== undefined) params.pid = filter.pid;
    if (filter.ref !== undefined) params.ref = filter.ref;
    return this.#read(sql)
      .all(params)
      .map((row) => toStoredEvent(row as Parameters<typeof toStoredEvent>[0]));
  }

  expiredProcesses(policy: ExpiryPolicy): number[] {
    const now = policy.now ?? Date.now();
    const pids = (sql: string, ...params: number[]) =>
      this.#read(sql)
        .all(...params)
        .map((row) => row.pid as number);
    const aged = pids(
      "SELECT pid FROM processes WHERE state = 'idle' AND changed_at < ? ORDER BY changed_at, pid LIMIT ?",
      now - policy.maxAgeMs,
      policy.limit,
    );
    const total = Number(this.#read('SELECT count(*) AS n FROM processes').get()?.n ?? 0);
    const excess = Math.min(total - aged.length - policy.maxProcesses, policy.limit - aged.length);
    if (excess <= 0) return aged;
    return aged.concat(
      pids(
        "SELECT pid FROM processes WHERE state = 'idle' AND changed_at >= ? ORDER BY changed_at, pid LIMIT ?",
        now - policy.maxAgeMs,
        excess,
      ),
    );
  }

  deleteUnownedEvents(beforeMs: number): void {
    this.#write('DELETE FROM events WHERE pid IS NULL AND at < ?', [beforeMs]);
  }

  flush(): void {
    this.#open();
    this.#batch.flush();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#batch.flush();
    // A clean stop: the next start continues exactly after the last pid and seq handed out.
    this.#reserve('pid', this.#lastPid);
    this.#reserve('seq', this.#lastSeq);
    this.#closed = true;
    this.#db.close();
  }

  // --- internals -------------------------------------------------------------------------------

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Queues a write for the next batch (parameters are captured now: callers mutate their records). */
  #write(sql: string, params: Array<string | number | null | Uint8Array>): void {
    this.#open();
    const statement = this.#statement(sql);
    this.#batch.add(() => statement.run(...params));
  }

  /** A statement for reading, after committing pending writes so it sees them. */
  #read(sql: string): StatementSync {
    this.flush();
    return this.#statement(sql);
  }

  #data(seq: number, pid: number, run: number): void {
    this.#lastData = { seq, pid, run };
    this.#seq(seq);
  }

  #seq(seq: number): void {
    if (seq > this.#lastSeq) this.#lastSeq = seq;
    if (seq > this.#reservedSeq) this.#reservedSeq = this.#reserve('seq', seq + SEQ_BLOCK - 1);
  }

  /**
   * Stores a counter's high-water mark at once, outside the batch: events reach clients before their
   * batch commits, so the mark must be on disk first.
   */
  #reserve(name: 'pid' | 'seq', value: number): number {
    this.#open();
    this.#statement('UPDATE counters SET value = ? WHERE name = ?').run(value, name);
    return value;
  }

  #open(): void {
    if (this.#closed)
      throw new StoreError('STORE_CLOSED', this.path, `the process database ${this.path} is closed`);
  }
}
