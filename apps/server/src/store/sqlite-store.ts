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
import { IdCounters } from './id-counters.ts';
import { defaultDbPath, isMemoryPath, type OpenDatabase, openDatabase } from './open-database.ts';
import { RecordCache } from './record-cache.ts';
import { encodeValue, PROCESS_COLUMNS, processRow, runAssignments, toProcess } from './row-codec.ts';
import { SqlWriter } from './sql-writer.ts';
import { readEvents, readExpiredPids, readProcesses, readRun } from './store-reads.ts';
import { UpdateCoalescer } from './update-coalescer.ts';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** Database file (created with its directory), or `:memory:` for a throwaway one. @default {@link defaultDbPath} */
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
  /** Past this many processes of one principal, its idle ones whose last change is oldest expire. */
  maxProcesses: number;
  /**
   * Past this many bytes of stored outputs and logs of one principal, its idle ones whose last change
   * is oldest expire until the rest fits. @default no byte quota
   */
  maxBytes?: number;
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

/** The `SET` list of an upsert of a process record: every column but `pid` (and `stored_bytes`). */
const UPSERT_PROCESS = PROCESS_COLUMNS.slice(1)
  .map((c) => `${c} = excluded.${c}`)
  .join(', ');

/**
 * Takes the bytes of a run's outputs and logs (parameters: pid, run) off its process's `stored_bytes`,
 * before they are deleted; a run with none (the usual case) leaves the row untouched.
 */
const UNCOUNT_RUN = `UPDATE processes SET stored_bytes = stored_bytes
    - coalesce((SELECT sum(length(value)) FROM outputs WHERE pid = ?1 AND run = ?2), 0)
    - coalesce((SELECT sum(length(CAST(text AS BLOB))) FROM logs WHERE pid = ?1 AND run = ?2), 0)
   WHERE pid = ?1 AND (EXISTS (SELECT 1 FROM outputs WHERE pid = ?1 AND run = ?2)
                       OR EXISTS (SELECT 1 FROM logs WHERE pid = ?1 AND run = ?2))`;

/** Merges byte counts waiting for one process. */
const addBytes = (waiting: { bytes: number }, more: { bytes: number }) => {
  waiting.bytes += more.bytes;
};

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
  const opened = openDatabase(options.path ?? defaultDbPath(), {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
  return new SqliteStore(opened, options);
}

class SqliteStore implements SqliteProcessStore {
  readonly path: string;
  readonly schema: { from: number; to: number };
  readonly #opened: OpenDatabase;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #sql: SqlWriter;
  readonly #cache: RecordCache;
  readonly #counters: IdCounters;
  /** The last output or log written, so its event is not stored a second time. */
  #lastData: { seq: number; pid: number; run: number } | undefined;
  /** Updates waiting in the batch, merged by process and by `pid:run`. */
  readonly #pendingProcesses: UpdateCoalescer<number, ProcessUpdate>;
  readonly #pendingRuns: UpdateCoalescer<string, RunUpdate>;
  /** Bytes of outputs and logs written in the batch, added to `processes.stored_bytes` once per process. */
  readonly #pendingBytes: UpdateCoalescer<number, { bytes: number }>;
  /** A statement for reading, after committing pending writes so it sees them. */
  readonly #read = (sql: string) => this.#sql.read(sql);

  constructor(opened: OpenDatabase, options: SqliteStoreOptions) {
    const { db, path, schema } = opened;
    this.#opened = opened;
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
    this.#sql = new SqlWriter(db, path, {
      flushDelayMs: options.flushDelayMs ?? 5,
      onError: (error) => {
        // The batch is gone: pending updates must start new writes.
        this.#pendingProcesses.clear();
        this.#pendingRuns.clear();
        this.#pendingBytes.clear();
        onError(error);
      },
    });
    const enqueue = (write: () => void) => this.#sql.enqueue(write);
    this.#pendingProcesses = new UpdateCoalescer(enqueue);
    this.#pendingRuns = new UpdateCoalescer(enqueue);
    this.#pendingBytes = new UpdateCoalescer(enqueue, addBytes);
    // A counter's mark is stored at once, outside the batch (see IdCounters).
    this.#counters = new IdCounters(db, (name, value) =>
      this.#sql.runNow('UPDATE counters SET value = ? WHERE name = ?', [value, name]),
    );
  }

  counters() {
    return this.#counters.last;
  }

  putProcess(record: StoredProcess): void {
    const row = processRow(record, Date.now());
    // A replaced record keeps its `stored_bytes`: its outputs and logs stay.
    this.#sql.write(
      `INSERT INTO processes (${PROCESS_COLUMNS.join(', ')}) VALUES (${PROCESS_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (pid) DO UPDATE SET ${UPSERT_PROCESS}`,
      row,
    );
    this.#cache.putProcess(record);
    this.#pendingProcesses.forget(record.pid); // later updates go after this write
    this.#pendingBytes.forget(record.pid);
    this.#counters.usePid(record.pid);
  }

  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void {
    this.#cache.updateProcess(pid, update);
    // `idle_since` (for retention) moves only when the process becomes idle, so other transitions
    // touch no index.
    const fields: ProcessUpdate = { ...update, ...(update.state === 'idle' && { idleSince: Date.now() }) };
    this.#pendingProcesses.add(pid, fields, (last) => {
      const params = [last.state, last.status, last.runs] as const;
      if (last.idleSince === undefined)
        this.#sql
          .statement('UPDATE processes SET state = ?, status = ?, runs = ? WHERE pid = ?')
          .run(...params, pid);
      else
        this.#sql
          .statement('UPDATE processes SET state = ?, status = ?, runs = ?, idle_since = ? WHERE pid = ?')
          .run(...params, last.idleSince, pid);
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
    return readProcesses(this.#read, filter);
  }

  deleteProcess(pid: number): void {
    for (const table of ['processes', 'runs', 'outputs', 'logs', 'events'])
      this.#sql.write(`DELETE FROM ${table} WHERE pid = ?`, [pid]);
    this.#cache.deleteProcess(pid);
    this.#pendingProcesses.forget(pid);
    this.#pendingBytes.forget(pid);
  }

  insertRun(pid: number, run: number, init: Parameters<ProcessStore['insertRun']>[2]): void {
    const fields = { state: 'queued' as const, status: null, ...init };
    const { columns, values } = runAssignments(fields);
    this.#sql.write(
      `INSERT OR REPLACE INTO runs (pid, run, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')})`,
      [pid, run, ...values],
    );
    this.#pendingRuns.forget(`${pid}:${run}`); // later updates go after this write
    // A new run starts empty (as the cache says), even over leftovers of a run with that number.
    this.#sql.write(UNCOUNT_RUN, [pid, run]);
    this.#sql.write('DELETE FROM outputs WHERE pid = ? AND run = ?', [pid, run]);
    this.#sql.write('DELETE FROM logs WHERE pid = ? AND run = ?', [pid, run]);
    this.#cache.putRun({ pid, run, ...fields, outputs: [], stdout: '', stderr: '' }, 0);
  }

  updateRun(pid: number, run: number, update: RunUpdate): void {
    this.#cache.updateRun(pid, run, update);
    this.#pendingRuns.add(`${pid}:${run}`, update, (merged) => {
      const { columns, values } = runAssignments(merged);
      if (columns.length === 0) return;
      const sql = `UPDATE runs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE pid = ? AND run = ?`;
      this.#sql.statement(sql).run(...values, pid, run);
    });
  }

  appendOutput(pid: number, run: number, seq: number, value: unknown): void {
    const encoded = encodeValue(value);
    this.#sql.write('INSERT OR REPLACE INTO outputs (seq, pid, run, value) VALUES (?, ?, ?, ?)', [
      seq,
      pid,
      run,
      encoded,
    ]);
    this.#cache.appendOutput(pid, run, value, encoded.byteLength);
    this.#count(pid, encoded.byteLength);
    this.#data(seq, pid, run);
  }

  appendLog(pid: number, run: number, seq: number, stream: 'stdout' | 'stderr', text: string): void {
    this.#sql.write('INSERT OR REPLACE INTO logs (seq, pid, run, stream, text) VALUES (?, ?, ?, ?, ?)', [
      seq,
      pid,
      run,
      stream,
      text,
    ]);
    this.#cache.appendLog(pid, run, stream, text);
    this.#count(pid, Buffer.byteLength(text));
    this.#data(seq, pid, run);
  }

  getRun(pid: number, run: number): StoredRun | undefined {
    const cached = this.#cache.getRun(pid, run);
    if (cached) return cached;
    const found = readRun(this.#read, pid, run);
    if (!found) return undefined;
    this.#cache.putRun(found.run, found.outputBytes);
    return { ...found.run, outputs: [...found.run.outputs] };
  }

  appendEvent(
    event: Parameters<ProcessStore['appendEvent']>[0],
    route: Parameters<ProcessStore['appendEvent']>[1],
  ): void {
    this.#counters.useSeq(event.seq);
    const data = this.#lastData;
    // An output or log event whose data was just written with its seq is rebuilt from it on replay.
    if (
      (event.type === 'output' || event.type === 'log') &&
      data?.seq === event.seq &&
      data.pid === event.pid
    )
      return;
    this.#sql.write(
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
    return readEvents(this.#read, since, filter);
  }

  expiredProcesses(policy: ExpiryPolicy): number[] {
    const cutoff = (policy.now ?? Date.now()) - policy.maxAgeMs;
    return readExpiredPids(
      this.#read,
      cutoff,
      { maxProcesses: policy.maxProcesses, maxBytes: policy.maxBytes ?? Number.POSITIVE_INFINITY },
      policy.limit,
    );
  }

  deleteUnownedEvents(beforeMs: number): void {
    this.#sql.write('DELETE FROM events WHERE pid IS NULL AND at < ?', [beforeMs]);
  }

  flush(): void {
    this.#sql.flush();
  }

  async close(): Promise<void> {
    if (this.#sql.closed) return;
    // Whatever fails (a damaged file), the checkpointer stops and the lock is released.
    try {
      // A clean stop: the next start continues exactly after the last pid and seq handed out.
      this.#sql.close(() => this.#counters.storeExact());
      await this.#checkpointer?.stop();
      if (!isMemoryPath(this.path)) this.#opened.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } finally {
      await this.#checkpointer?.stop();
      this.#opened.close();
    }
  }

  /**
   * Adds `bytes` of a stored output or log to the process's `stored_bytes`, once per batch. Every
   * output and log comes with a new `seq` (seqs never repeat), so each write is a new row.
   */
  #count(pid: number, bytes: number): void {
    this.#pendingBytes.add(pid, { bytes }, (merged) =>
      this.#sql
        .statement('UPDATE processes SET stored_bytes = stored_bytes + ? WHERE pid = ?')
        .run(merged.bytes, pid),
    );
  }

  /** Notes the output or log just written (its event need not be stored) and its seq. */
  #data(seq: number, pid: number, run: number): void {
    this.#lastData = { seq, pid, run };
    this.#counters.useSeq(seq);
  }
}
