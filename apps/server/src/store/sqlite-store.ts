import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  ProcessStore,
  RunUpdate,
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from '../processes/process-store.ts';
import { type Checkpointer, startCheckpointer } from './checkpointer.ts';
import { DEFAULT_DB_PATH, isMemoryPath, type OpenDatabase, openDatabase } from './open-database.ts';
import { RecordCache } from './record-cache.ts';
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
   * How long (ms) writes wait to be committed together; 0 commits once per event-loop turn. Reads see
   * pending writes (from the cache, or by committing them first). After a crash, at most this much
   * work is lost. @default 5
   */
  flushDelayMs?: number;
  /** How long (ms) to wait for a database another process holds before `STORE_LOCKED`. @default 2000 */
  busyTimeoutMs?: number;
  /**
   * A batch of writes failed (disk full, I/O error) and was rolled back, or a background checkpoint
   * failed. @default a process warning
   */
  onError?: (error: unknown) => void;
  /** Time between checkpoints (WAL -> database file, on a worker thread), in ms. @default 1000 */
  checkpointIntervalMs?: number;
  /**
   * Limits of the in-memory cache of recently used records and runs (which spares the hot path SQL
   * reads). @default { processes: 2000, bytes: 33554432 }
   */
  cache?: { processes?: number; bytes?: number };
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

/** The fields of a pending process update (`idleSince`: ms since the epoch, when it became idle). */
type ProcessUpdate = Pick<StoredProcess, 'state' | 'status' | 'runs'> & { idleSince?: number };

/** pids and seqs are reserved in blocks, so one never goes back after a crash (see counters()). */
const PID_BLOCK = 32;
const SEQ_BLOCK = 1024;
/** Limits of the cache of recently used records and runs. */
const CACHE_PROCESSES = 2000;
const CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Opens the durable process store: SQLite (Node's built-in `node:sqlite`) in WAL mode. Writes are
 * batched into one transaction every `flushDelayMs` (5 ms), updates of one row within a batch merged;
 * recently used records and runs are cached, so the manager's hot path runs no SQL reads; other reads
 * commit what is pending first. Output values and logs are stored once, with their event `seq`.
 *
 * pids and seqs handed out are reserved on disk ahead of use in small blocks, so after a crash the
 * counters continue past anything a client may have seen (they may skip ahead; they never repeat).
 * After a clean {@link ProcessStore.close} they continue exactly.
 * @throws StoreError when the database cannot be opened (see {@link openDatabase}).
 */
export function openSqliteStore(options: SqliteStoreOptions = {}): SqliteProcessStore {
  const opened = openDatabase(options.path ?? DEFAULT_DB_PATH, {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
  return new SqliteStore(opened, options);
}

class SqliteStore implements SqliteProcessStore {
  readonly path: string;
  readonly schema: { from: number; to: number };
  readonly #db: DatabaseSync;
  readonly #opened: OpenDatabase;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #batch: WriteBatcher;
  readonly #statements = new Map<string, StatementSync>();
  readonly #cache: RecordCache;
  #lastPid: number;
  #lastSeq: number;
  #reservedPid: number;
  #reservedSeq: number;
  /** The last output or log written, so its event is not stored a second time. */
  #lastData: { seq: number; pid: number; run: number } | undefined;
  #closed = false;
  /** Updates waiting in the batch, merged by process and by `pid:run` (see #coalesce). */
  readonly #pendingProcesses = new Map<number, ProcessUpdate>();
  readonly #pendingRuns = new Map<string, RunUpdate>();

  constructor(opened: OpenDatabase, options: SqliteStoreOptions) {
    const { db, path, schema } = opened;
    this.#opened = opened;
    this.#db = db;
    this.path = path;
    this.schema = schema;
    this.#cache = new RecordCache(
      options.cache?.processes ?? CACHE_PROCESSES,
      options.cache?.bytes ?? CACHE_BYTES,
    );
    const onError =
      options.onError ?? ((error: unknown) => process.emitWarning(`process store: ${String(error)}`));
    this.#checkpointer = isMemoryPath(path)
      ? undefined
      : startCheckpointer(path, options.checkpointIntervalMs ?? 1000, (message) =>
          onError(new Error(`checkpoint of ${path} failed: ${message}`)),
        );
    this.#batch = new WriteBatcher(db, {
      flushDelayMs: options.flushDelayMs ?? 5,
      onError: (error) => {
        // The batch is gone: pending updates must start new writes.
        this.#pendingProcesses.clear();
        this.#pendingRuns.clear();
        onError(error);
      },
    });
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
    this.#cache.putProcess(record);
    this.#pendingProcesses.delete(record.pid); // later updates go after this write
    if (record.pid > this.#lastPid) this.#lastPid = record.pid;
    if (record.pid > this.#reservedPid) this.#reservedPid = this.#reserve('pid', record.pid + PID_BLOCK - 1);
  }

  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void {
    this.#cache.updateProcess(pid, update);
    // `idle_since` (for retention) moves only when the process becomes idle, so other transitions
    // touch no index.
    const fields: ProcessUpdate = { ...update, ...(update.state === 'idle' && { idleSince: Date.now() }) };
    this.#coalesce(this.#pendingProcesses, pid, fields, (last) => {
      const params = [last.state, last.status, last.runs] as const;
      if (last.idleSince === undefined)
        this.#statement('UPDATE processes SET state = ?, status = ?, runs = ? WHERE pid = ?').run(
          ...params,
          pid,
        );
      else
        this.#statement(
          'UPDATE processes SET state = ?, status = ?, runs = ?, idle_since = ? WHERE pid = ?',
        ).run(...params, last.idleSince, pid);
    });
  }

  getProcess(pid: number): StoredProcess | undefined {
    const cached = this.#cache.getProcess(pid);
    if (cached) return cached;
    const row = this.#read('SELECT * FROM processes WHERE pid = ?').get(pid);
    if (!row) return undefined;
    const record = toProcess(row as Parameters<typeof toProcess>[0]);
    this.#cache.putProcess(record);
    return record;
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
    this.#cache.deleteProcess(pid);
    this.#pendingProcesses.delete(pid);
  }

  insertRun(pid: number, run: number, init: Parameters<ProcessStore['insertRun']>[2]): void {
    const fields = { state: 'queued' as const, status: null, ...init };
    const { columns, values } = runAssignments(fields);
    this.#write(
      `INSERT OR REPLACE INTO runs (pid, run, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')})`,
      [pid, run, ...values],
    );
    this.#pendingRuns.delete(`${pid}:${run}`); // later updates go after this write
    // A new run starts empty (as the cache says), even over leftovers of a run with that number.
    this.#write('DELETE FROM outputs WHERE pid = ? AND run = ?', [pid, run]);
    this.#write('DELETE FROM logs WHERE pid = ? AND run = ?', [pid, run]);
    this.#cache.putRun({ pid, run, ...fields, outputs: [], stdout: '', stderr: '' }, 0);
  }

  updateRun(pid: number, run: number, update: RunUpdate): void {
    this.#cache.updateRun(pid, run, update);
    this.#coalesce(this.#pendingRuns, `${pid}:${run}`, update, (merged) => {
      const { columns, values } = runAssignments(merged);
      if (columns.length === 0) return;
      const sql = `UPDATE runs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE pid = ? AND run = ?`;
      this.#statement(sql).run(...values, pid, run);
    });
  }

  appendOutput(pid: number, run: number, seq: number, value: unknown): void {
    const encoded = encodeValue(value);
    this.#write('INSERT OR REPLACE INTO outputs (seq, pid, run, value) VALUES (?, ?, ?, ?)', [
      seq,
      pid,
      run,
      encoded,
    ]);
    this.#cache.appendOutput(pid, run, value, encoded.byteLength);
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
    this.#cache.appendLog(pid, run, stream, text);
    this.#data(seq, pid, run);
  }

  getRun(pid: number, run: number): StoredRun | undefined {
    const cached = this.#cache.getRun(pid, run);
    if (cached) return cached;
    const row = this.#read('SELECT * FROM runs WHERE pid = ? AND run = ?').get(pid, run);
    if (!row) return undefined;
    let outputBytes = 0;
    const outputs = this.#read('SELECT value FROM outputs WHERE pid = ? AND run = ? ORDER BY seq')
      .all(pid, run)
      .map((output) => {
        outputBytes += (output.value as Uint8Array).byteLength;
        return decodeValue(output.value as Uint8Array);
      });
    const logs = this.#read('SELECT stream, text FROM logs WHERE pid = ? AND run = ? ORDER BY seq').all(
      pid,
      run,
    );
    const found = toRun(row as Parameters<typeof toRun>[0], outputs, logs as Parameters<typeof toRun>[2]);
    this.#cache.putRun(found, outputBytes);
    return { ...found, outputs: [...found.outputs] };
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
      "SELECT pid FROM processes WHERE idle_since < ? AND state = 'idle' ORDER BY idle_since, pid LIMIT ?",
      now - policy.maxAgeMs,
      policy.limit,
    );
    const total = Number(this.#read('SELECT count(*) AS n FROM processes').get()?.n ?? 0);
    const excess = Math.min(total - aged.length - policy.maxProcesses, policy.limit - aged.length);
    if (excess <= 0) return aged;
    return aged.concat(
      pids(
        "SELECT pid FROM processes WHERE idle_since >= ? AND state = 'idle' ORDER BY idle_since, pid LIMIT ?",
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
    await this.#checkpointer?.stop();
    if (!isMemoryPath(this.path)) this.#db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    this.#opened.close();
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

  /**
   * Queues an update that merges with the pending one of the same key: the write happens once, at the
   * place of the first, with the fields of all (later writes of other rows do not depend on it).
   */
  #coalesce<K, T extends object>(pending: Map<K, T>, key: K, update: T, write: (merged: T) => void): void {
    const waiting = pending.get(key);
    if (waiting) {
      Object.assign(waiting, update);
      return;
    }
    const merged = { ...update };
    pending.set(key, merged);
    this.#open();
    this.#batch.add(() => {
      if (pending.get(key) === merged) pending.delete(key);
      write(merged);
    });
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
