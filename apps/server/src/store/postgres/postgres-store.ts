import type {
  ProcessStore,
  RunUpdate,
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
  StoreHealth,
} from '../../processes/process-store.ts';
import { IdCounters } from '../id-counters.ts';
import { RecordCache } from '../record-cache.ts';
import { encodeValue, PROCESS_COLUMNS, processRow, runAssignments, toProcess } from '../row-codec.ts';
import type { ExpiryPolicy, SqliteProcessStore } from '../sqlite-store.ts';
import { StoreError } from '../store-error.ts';
import { UpdateCoalescer } from '../update-coalescer.ts';
import type { PostgresStoreOptions } from './open-postgres-store.ts';
import type { PgBridge } from './pg-bridge.ts';
import { type ClusterNode, PgCluster } from './pg-cluster.ts';
import type { PgParam } from './pg-protocol.ts';
import {
  readPgClusterProcesses,
  readPgEvents,
  readPgExpiredPids,
  readPgNodes,
  readPgProcesses,
  readPgRun,
} from './pg-reads.ts';
import { numbered, PgSqlDatabase } from './pg-sql-database.ts';
import { PgWriteQueue } from './pg-write-queue.ts';

/** The Postgres store answers what the SQLite one does (retention, schema, flush), and more. */
export interface PostgresProcessStore extends SqliteProcessStore {
  /** A connection for the other tables of the database (conversations), ordered after the store's writes. */
  sqlDatabase(): PgSqlDatabase;
  /** This server's node name (its row in `nodes`). */
  readonly node: string;
  /** Every node that has used the database, by name. @throws StoreError `STORE_UNAVAILABLE`. */
  nodes(): Promise<ClusterNode[]>;
  /**
   * The processes that are not idle, counted by the node that runs them and state (cluster mode).
   * @throws StoreError `STORE_UNAVAILABLE`.
   */
  clusterProcesses(): Promise<Array<{ node: string; state: string; count: number }>>;
}

type ProcessUpdate = Pick<StoredProcess, 'state' | 'status' | 'runs'> & { idleSince?: number };

/**
 * The process store on PostgreSQL, opened by `openPostgresStore` (which takes the database lock,
 * migrates the schema and takes the node's lease first).
 */
export class PostgresStore implements PostgresProcessStore {
  readonly path: string;
  readonly schema: { from: number; to: number };
  readonly node: string;
  readonly #bridge: PgBridge;
  readonly #cache: RecordCache;
  /** pids and seqs of a server alone on its database (a cluster takes them from `cluster`). */
  readonly #counters: IdCounters | undefined;
  readonly cluster: PgCluster | undefined;
  readonly #queue: PgWriteQueue;
  readonly #maxPending: number;
  #closed = false;
  #lastData: { seq: number; pid: number } | undefined;
  readonly #pendingProcesses: UpdateCoalescer<number, ProcessUpdate>;
  readonly #pendingRuns: UpdateCoalescer<string, RunUpdate>;
  /** Bytes of outputs and logs written in the batch, added to `processes.stored_bytes` once per process. */
  readonly #pendingBytes: UpdateCoalescer<number, { bytes: number }>;
  /** A read, sent after the pending writes so it sees them. */
  readonly #read = (sql: string, params: PgParam[]) => {
    this.flush();
    return this.#bridge.query(numbered(sql), params);
  };

  constructor(
    bridge: PgBridge,
    schema: { from: number; to: number },
    node: string,
    options: PostgresStoreOptions,
    last: { lastPid: number; lastSeq: number },
  ) {
    this.#bridge = bridge;
    this.node = node;
    this.path = bridge.url;
    this.schema = schema;
    this.#maxPending = options.maxPendingBatches ?? 64;
    this.#cache = new RecordCache(options.cache?.processes ?? 2000, options.cache?.bytes ?? 32 * 1024 * 1024);
    const enqueue = (write: () => void) => this.#enqueue(write);
    this.#pendingProcesses = new UpdateCoalescer(enqueue);
    this.#pendingRuns = new UpdateCoalescer(enqueue);
    this.#pendingBytes = new UpdateCoalescer(enqueue, (waiting, more) => {
      waiting.bytes += more.bytes;
    });
    this.cluster = options.cluster
      ? new PgCluster(bridge, node, {
          flush: () => this.flush(),
          write: (sql, params) => this.#write(sql, params),
          read: (sql, params) => this.#read(sql, params),
          forget: (pid) => this.#cache.deleteProcess(pid),
        })
      : undefined;
    const cluster = this.cluster;
    this.#queue = new PgWriteQueue(bridge, {
      flushDelayMs: options.flushDelayMs ?? 5,
      onError: options.onError ?? (() => {}),
      ...(cluster && { finish: (statements) => cluster.finishBatch(statements) }),
    });
    this.#counters = cluster
      ? undefined
      : // A mark is its own transaction, queued ahead of the batches after it.
        new IdCounters(last, (name, value) =>
          bridge.post([{ sql: 'UPDATE counters SET value = $1 WHERE name = $2', params: [value, name] }]),
        );
  }

  counters() {
    return this.#counters?.last ?? { lastPid: 0, lastSeq: 0 };
  }

  /**
   * Stores a new or replaced record. Back-pressure: with `maxPendingBatches` batches uncommitted, it
   * first waits (at most `timeoutMs`) for the database to catch up.
   * @throws StoreError `STORE_UNAVAILABLE` when the database does not catch up in time.
   */
  putProcess(record: StoredProcess): void {
    // What may throw comes first, so a refused record leaves nothing behind.
    if (this.#bridge.pending >= this.#maxPending)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.path,
        `the process database ${this.path} is ${this.#bridge.pending} write batches behind; retry later`,
      );
    this.#counters?.usePid(record.pid);
    const columns = PROCESS_COLUMNS.join(', ');
    const updates = PROCESS_COLUMNS.slice(1)
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    this.#write(
      `INSERT INTO processes (${columns}) VALUES (${PROCESS_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (pid) DO UPDATE SET ${updates}`,
      processRow(record, Date.now()),
    );
    if (this.cluster) this.#write('UPDATE processes SET node = ? WHERE pid = ?', [this.node, record.pid]);
    this.#cache.putProcess(record);
    this.#pendingProcesses.forget(record.pid);
    this.#pendingBytes.forget(record.pid);
  }

  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void {
    this.#cache.updateProcess(pid, update);
    const fields: ProcessUpdate = { ...update, ...(update.state === 'idle' && { idleSince: Date.now() }) };
    // In a cluster the node that changes a process runs it.
    const node = this.cluster ? ', node = ?' : '';
    const nodeParam = this.cluster ? [this.node] : [];
    this.#pendingProcesses.add(pid, fields, (last) => {
      if (last.idleSince === undefined)
        this.#add(`UPDATE processes SET state = ?, status = ?, runs = ?${node} WHERE pid = ?`, [
          last.state,
          last.status,
          last.runs,
          ...nodeParam,
          pid,
        ]);
      else
        this.#add(
          `UPDATE processes SET state = ?, status = ?, runs = ?, idle_since = ?${node} WHERE pid = ?`,
          [last.state, last.status, last.runs, last.idleSince, ...nodeParam, pid],
        );
    });
  }

  async getProcess(pid: number): Promise<StoredProcess | undefined> {
    const cached = this.#cache.getProcess(pid);
    if (cached) return cached;
    const row = (await this.#read('SELECT * FROM processes WHERE pid = ?', [pid]))[0];
    if (!row) return undefined;
    const record = toProcess(row as Parameters<typeof toProcess>[0]);
    this.#cache.putProcess(record);
    return record;
  }

  async listProcesses(filter: StoredProcessFilter): Promise<StoredProcess[]> {
    return readPgProcesses(this.#read, filter);
  }

  deleteProcess(pid: number): void {
    this.#write(
      `DELETE FROM event_log WHERE seq IN (SELECT seq FROM events WHERE pid = $1
         UNION ALL SELECT seq FROM outputs WHERE pid = $1 UNION ALL SELECT seq FROM logs WHERE pid = $1)`,
      [pid],
    );
    for (const table of ['processes', 'runs', 'outputs', 'logs', 'events'])
      this.#write(`DELETE FROM ${table} WHERE pid = ?`, [pid]);
    this.#cache.deleteProcess(pid);
    this.#pendingProcesses.forget(pid);
    this.#pendingBytes.forget(pid);
  }

  insertRun(pid: number, run: number, init: RunUpdate): void {
    const fields = { state: 'queued' as const, status: null, ...init };
    const { columns, values } = runAssignments(fields);
    this.#write(
      `INSERT INTO runs (pid, run, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')})
         ON CONFLICT (pid, run) DO UPDATE SET ${[
           'state',
           'status',
           'queued_at',
           'started_at',
           'ended_at',
           'duration_ms',
           'error',
           'truncated',
         ]
           .map((c) => (columns.includes(c) ? `${c} = excluded.${c}` : `${c} = NULL`))
           .join(', ')}`,
      [pid, run, ...values],
    );
    this.#pendingRuns.forget(`${pid}:${run}`);
    // A new run starts empty: the bytes of leftovers of a run with that number are taken off first
    // (a run with none leaves the row untouched).
    this.#write(
      `UPDATE processes SET stored_bytes = stored_bytes
         - coalesce((SELECT sum(octet_length(value)) FROM outputs WHERE pid = $1 AND run = $2), 0)
         - coalesce((SELECT sum(octet_length(text)) FROM logs WHERE pid = $1 AND run = $2), 0)
        WHERE pid = $1 AND (EXISTS (SELECT 1 FROM outputs WHERE pid = $1 AND run = $2)
                            OR EXISTS (SELECT 1 FROM logs WHERE pid = $1 AND run = $2))`,
      [pid, run],
    );
    this.#write('DELETE FROM outputs WHERE pid = ? AND run = ?', [pid, run]);
    this.#write('DELETE FROM logs WHERE pid = ? AND run = ?', [pid, run]);
    this.#cache.putRun({ pid, run, ...fields, outputs: [], stdout: '', stderr: '' }, 0);
  }

  updateRun(pid: number, run: number, update: RunUpdate): void {
    this.#cache.updateRun(pid, run, update);
    this.#pendingRuns.add(`${pid}:${run}`, update, (merged) => {
      const { columns, values } = runAssignments(merged);
      if (columns.length === 0) return;
      this.#add(`UPDATE runs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE pid = ? AND run = ?`, [
        ...values,
        pid,
        run,
      ]);
    });
  }

  appendOutput(pid: number, run: number, seq: number, value: unknown): void {
    const encoded = encodeValue(value);
    this.#write(
      'INSERT INTO outputs (seq, pid, run, value) VALUES (?, ?, ?, ?) ON CONFLICT (seq) DO UPDATE SET pid = excluded.pid, run = excluded.run, value = excluded.value',
      [seq, pid, run, encoded],
    );
    this.#cache.appendOutput(pid, run, value, encoded.byteLength);
    this.#count(pid, encoded.byteLength);
    this.#data(seq, pid);
  }

  appendLog(pid: number, run: number, seq: number, stream: 'stdout' | 'stderr', text: string): void {
    this.#write(
      'INSERT INTO logs (seq, pid, run, stream, text) VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq) DO UPDATE SET pid = excluded.pid, run = excluded.run, stream = excluded.stream, text = excluded.text',
      [seq, pid, run, stream, text],
    );
    this.#cache.appendLog(pid, run, stream, text);
    this.#count(pid, Buffer.byteLength(text));
    this.#data(seq, pid);
  }

  async getRun(pid: number, run: number): Promise<StoredRun | undefined> {
    const cached = this.#cache.getRun(pid, run);
    if (cached) return cached;
    const found = await readPgRun(this.#read, pid, run);
    if (!found) return undefined;
    this.#cache.putRun(found.run, found.outputBytes);
    return { ...found.run, outputs: [...found.run.outputs] };
  }

  appendEvent(
    event: Parameters<ProcessStore['appendEvent']>[0],
    route: Parameters<ProcessStore['appendEvent']>[1],
  ): void {
    this.#counters?.useSeq(event.seq);
    if (!this.#queue.fenced) this.cluster?.noteEvent(event.seq);
    const data = this.#lastData;
    // An output or log event whose data was just written with its seq is rebuilt from it on replay.
    if (
      (event.type === 'output' || event.type === 'log') &&
      data?.seq === event.seq &&
      data.pid === event.pid
    )
      return;
    this.#write(
      `INSERT INTO events (seq, owner, pid, ref, stream_id, at, body) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (seq) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, ref = excluded.ref,
           stream_id = excluded.stream_id, at = excluded.at, body = excluded.body`,
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

  async eventsSince(since: number, filter: StoredEventFilter): Promise<StoredEvent[]> {
    return readPgEvents(this.#read, since, filter, this.cluster !== undefined);
  }

  expiredProcesses(policy: ExpiryPolicy): Promise<number[]> {
    const cutoff = (policy.now ?? Date.now()) - policy.maxAgeMs;
    return readPgExpiredPids(
      this.#read,
      cutoff,
      { maxProcesses: policy.maxProcesses, maxBytes: policy.maxBytes ?? Number.POSITIVE_INFINITY },
      policy.limit,
    );
  }

  sqlDatabase(): PgSqlDatabase {
    return new PgSqlDatabase(this.#bridge, () => this.flush());
  }

  nodes(): Promise<ClusterNode[]> {
    return readPgNodes(this.#read);
  }

  clusterProcesses(): Promise<Array<{ node: string; state: string; count: number }>> {
    return readPgClusterProcesses(this.#read);
  }

  deleteUnownedEvents(beforeMs: number): void {
    this.#write('DELETE FROM event_log WHERE seq IN (SELECT seq FROM events WHERE pid IS NULL AND at < ?)', [
      beforeMs,
    ]);
    this.#write('DELETE FROM events WHERE pid IS NULL AND at < ?', [beforeMs]);
  }

  /**
   * Drops every write from now on: another node ended this node's lease and owns its processes
   * (cluster mode; the database refuses the node's batches anyway).
   */
  fence(): void {
    this.#queue.fence();
    this.cluster?.dropBatch();
  }

  /** Sends the pending writes as one transaction, without waiting. @throws StoreError `STORE_CLOSED`. */
  flush(): void {
    this.#assertOpen();
    this.#queue.flush();
  }

  /** Sends the pending writes and resolves once every batch sent so far is committed. */
  async committed(): Promise<void> {
    if (this.#closed) return;
    this.flush();
    await this.#bridge.written();
  }

  health(): StoreHealth {
    const health = this.#bridge.health();
    return health.ok ? health : { ok: false, code: 'STORE_UNAVAILABLE', message: health.message };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      this.flush();
      this.#counters?.storeExact();
    } finally {
      this.#closed = true;
      await this.#bridge.close();
    }
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new StoreError('STORE_CLOSED', this.path, `the process database ${this.path} is closed`);
  }

  /** Queues a statement with `?` placeholders (parameters captured now). */
  #write(sql: string, params: PgParam[]): void {
    this.#assertOpen();
    this.#queue.write(sql, params);
  }

  /** Adds a statement to the batch being assembled. */
  #add(sql: string, params: PgParam[]): void {
    this.#queue.add(sql, params);
  }

  #enqueue(write: () => void): void {
    this.#assertOpen();
    this.#queue.enqueue(write);
  }

  /**
   * Adds `bytes` of a stored output or log to the process's `stored_bytes`, once per batch. Every
   * output and log comes with a new `seq` (seqs never repeat), so each write is a new row.
   */
  #count(pid: number, bytes: number): void {
    this.#pendingBytes.add(pid, { bytes }, (merged) =>
      this.#add('UPDATE processes SET stored_bytes = stored_bytes + ? WHERE pid = ?', [merged.bytes, pid]),
    );
  }

  #data(seq: number, pid: number): void {
    this.#lastData = { seq, pid };
    this.#counters?.useSeq(seq);
  }
}
