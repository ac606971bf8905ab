import type { ServerEvent } from '@mci/protocol';
import type { RunFile } from '@mci/sandbox';
import type { Kysely } from 'kysely';
import type {
  ClusterStore,
  EventRoute,
  ProcessStore,
  RunUpdate,
  StoredCall,
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
  StoreHealth,
} from '../../processes/process-store.ts';
import { IdCounters } from '../id-counters.ts';
import { RecordCache } from '../record-cache.ts';
import { toProcess } from '../row-codec.ts';
import { StoreError } from '../store-error.ts';
import { BatchCommitter } from './batch-committer.ts';
import { readCalls } from './call-reads.ts';
import type { Engine } from './engine.ts';
import { readEvents } from './event-reads.ts';
import {
  type ClusterNode as ClusterNodeRow,
  readExpiredPids,
  readProcesses,
  readRun,
  readRunSummaries,
} from './reads.ts';
import type { SqlStoreParts } from './store-parts.ts';
import type { Database } from './tables.ts';
import { runColumns } from './write-set.ts';

/** What {@link SqlProcessStore.expiredProcesses} selects. */
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

/** The durable {@link ProcessStore} (SQLite or PostgreSQL), with what retention and chat need on top. */
export interface SqlProcessStore extends ProcessStore {
  /** The engine that holds it. */
  readonly engine: Engine['kind'];
  /** Absolute file path, `:memory:`, or the PostgreSQL URL without its password. */
  readonly path: string;
  /** Schema version found when opening (0: a new database) and the version now. */
  readonly schema: { from: number; to: number };
  /** Starts committing pending writes now (without waiting for them). */
  flush(): void;
  /** Idle processes to delete, oldest change first (never a queued, running or terminating one). */
  expiredProcesses(policy: ExpiryPolicy): Promise<number[]>;
  /** Deletes events that belong to no process (intents, stream results) older than `beforeMs` (epoch ms). */
  deleteUnownedEvents(beforeMs: number): void;
  /**
   * The other tables of the same database (conversations): the connection, and `afterWrites`, which
   * resolves once the store's pending writes are committed.
   */
  readonly tables: { db: Kysely<Database>; afterWrites(): Promise<void> };
  /** The nodes sharing the database (PostgreSQL), for `/metrics`. */
  readonly nodes?: NodesView;
}

/** The nodes of a PostgreSQL database as `/metrics` shows them. */
export interface NodesView {
  /** This server's node name (its row in `nodes`). */
  readonly node: string;
  /** Every node that has used the database, by name. @throws the database's error. */
  list(): Promise<ClusterNodeRow[]>;
  /** Cluster nodes: the processes that are not idle, counted by the node that runs them and state. */
  processes?(): Promise<Array<{ node: string; state: string; count: number }>>;
}

/** Limits of the cache of recently used records and runs. */
const CACHE_PROCESSES = 2000;
const CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The process store on SQL, one implementation for SQLite and PostgreSQL. Writes go to a
 * {@link BatchCommitter} (merged per row, committed in order, one transaction per batch, retried
 * until they commit); recently used records and runs are cached, so the manager's hot path reads
 * nothing; other reads wait for the pending writes to commit, then query.
 */
export class SqlStore implements SqlProcessStore {
  readonly engine: Engine['kind'];
  readonly path: string;
  readonly schema: { from: number; to: number };
  readonly cluster: ClusterStore | undefined;
  readonly tables: { db: Kysely<Database>; afterWrites(): Promise<void> };
  readonly nodes: NodesView | undefined;
  readonly #parts: SqlStoreParts;
  readonly #db: Kysely<Database>;
  readonly #committer: BatchCommitter;
  readonly #cache: RecordCache;
  readonly #counters: IdCounters | undefined;
  readonly #maxPending: number;
  readonly #onError: (error: unknown) => void;
  /** The last output or log written, so its event is not stored a second time. */
  #lastData: { seq: number; pid: number } | undefined;
  #closed = false;

  constructor(parts: SqlStoreParts) {
    const { db, engine, label, options } = parts;
    this.#parts = parts;
    this.#db = db;
    this.engine = engine.kind;
    this.path = label;
    this.schema = parts.schema;
    this.cluster = parts.cluster;
    this.nodes = parts.nodes;
    this.#maxPending = options.maxPendingWrites ?? 100_000;
    this.#onError = options.onError ?? ((error) => process.emitWarning(`process store: ${String(error)}`));
    this.#cache = new RecordCache(
      options.cache?.processes ?? CACHE_PROCESSES,
      options.cache?.bytes ?? CACHE_BYTES,
    );
    const node = parts.cluster?.writes;
    this.#committer = new BatchCommitter({
      label,
      commit: (set) => parts.send(set.statements(db, engine, node)),
      retryable: parts.retryable,
      ...(options.flushDelayMs !== undefined && { flushDelayMs: options.flushDelayMs }),
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      onError: (error, dropped) => {
        if (dropped && parts.dropped?.(error)) return;
        this.#onError(
          dropped
            ? new Error(`a batch of writes to ${label} failed and was dropped: ${String(error)}`, {
                cause: error,
              })
            : new Error(`writes to ${label} fail and are retried: ${String(error)}`, { cause: error }),
        );
      },
      ...(options.onRecovered && { onRecovered: options.onRecovered }),
    });
    this.#counters = parts.cluster
      ? undefined
      : new IdCounters(parts.counters, (name, value) =>
          this.#committer.write((set) => set.setCounter(name, value)),
        );
    // The first ids handed out are below a mark committed before the store is used (see the openers).
    this.#counters?.reserveAhead();
    this.tables = { db, afterWrites: () => this.#committer.committed() };
  }

  counters() {
    return this.#counters?.last ?? { lastPid: 0, lastSeq: 0 };
  }

  /**
   * Stores a new or replaced record.
   * @throws StoreError `STORE_UNAVAILABLE` while writes fail, or too many batches wait to commit.
   */
  putProcess(record: StoredProcess): void {
    const health = this.health();
    if (!health.ok) throw new StoreError('STORE_UNAVAILABLE', this.path, health.message);
    if (this.#committer.pending >= this.#maxPending)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        this.path,
        `the process database ${this.path} is ${this.#committer.pending} writes behind; retry later`,
      );
    this.#counters?.usePid(record.pid);
    this.#committer.write((set) =>
      set.putProcess({
        pid: record.pid,
        owner: record.owner,
        code: record.code,
        lang: record.lang,
        ref: record.ref ?? null,
        created_at: record.createdAt,
        timeout_ms: record.timeoutMs,
        memory_limit_mb: record.memoryLimitMb,
        metadata: record.metadata === undefined ? null : JSON.stringify(record.metadata),
        stream_id: record.metadata?.streamId ?? null,
        state: record.state,
        status: record.status,
        runs: record.runs,
        idle_since: Date.now(),
        check: record.check ?? null,
        session: record.session ?? null,
      }),
    );
    this.#cache.putProcess(record);
  }

  updateProcess(pid: number, update: Pick<StoredProcess, 'state' | 'status' | 'runs'>): void {
    this.#cache.updateProcess(pid, update);
    // `idle_since` (for retention) moves only when the process becomes idle.
    this.#committer.write((set) =>
      set.changeProcess(pid, {
        state: update.state,
        status: update.status,
        runs: update.runs,
        ...(update.state === 'idle' && { idleSince: Date.now() }),
      }),
    );
  }

  async getProcess(pid: number): Promise<StoredProcess | undefined> {
    this.#assertOpen();
    const cached = this.#cache.getProcess(pid);
    if (cached) return cached;
    await this.#committer.committed();
    const row = await this.#db.selectFrom('processes').selectAll().where('pid', '=', pid).executeTakeFirst();
    if (!row) return undefined;
    const record = toProcess(row as never);
    this.#cache.putProcess(record);
    return record;
  }

  async listProcesses(filter: StoredProcessFilter): Promise<StoredProcess[]> {
    this.#assertOpen();
    await this.#committer.committed();
    return readProcesses(this.#db, filter);
  }

  deleteProcess(pid: number): void {
    this.#committer.write((set) => set.deleteProcess(pid));
    this.#cache.deleteProcess(pid);
  }

  insertRun(pid: number, run: number, init: RunUpdate): void {
    const fields = { state: 'queued' as const, status: null, ...init };
    // A run not seen before (the usual case) has left nothing in the database to replace.
    const replacing = this.#cache.hasRun(pid, run) !== false;
    this.#committer.write((set) =>
      set.putRun({ pid, run, state: fields.state, ...runColumns(fields) }, replacing),
    );
    this.#cache.putRun({ pid, run, ...fields, outputs: [], stdout: '', stderr: '' }, 0);
  }

  updateRun(pid: number, run: number, update: RunUpdate): void {
    this.#cache.updateRun(pid, run, update);
    this.#committer.write((set) => set.changeRun(pid, run, runColumns(update)));
  }

  appendOutput(pid: number, run: number, seq: number, value: unknown): void {
    const json = JSON.stringify(value);
    this.#committer.write((set) => set.addOutput({ seq, pid, run, json }));
    this.#cache.appendOutput(pid, run, value, Buffer.byteLength(json));
    this.#data(seq, pid);
  }

  appendLog(pid: number, run: number, seq: number, stream: 'stdout' | 'stderr', text: string): void {
    this.#committer.write((set) => set.addLog({ seq, pid, run, stream, text }, Buffer.byteLength(text)));
    this.#cache.appendLog(pid, run, stream, text);
    this.#data(seq, pid);
  }

  putFile(pid: number, run: number, file: RunFile): void {
    this.#committer.write((set) =>
      set.addFile({ pid, run, name: file.name, mime_type: file.mimeType, data: file.data }),
    );
  }

  async getFile(pid: number, run: number, name: string): Promise<RunFile | undefined> {
    this.#assertOpen();
    await this.#committer.committed();
    const row = await this.#db
      .selectFrom('run_files')
      .select(['mime_type', 'data'])
      .where('pid', '=', pid)
      .where('run', '=', run)
      .where('name', '=', name)
      .executeTakeFirst();
    return row && { name, mimeType: row.mime_type, data: new Uint8Array(row.data) };
  }

  async getRun(pid: number, run: number): Promise<StoredRun | undefined> {
    this.#assertOpen();
    const cached = this.#cache.getRun(pid, run);
    if (cached) return cached;
    await this.#committer.committed();
    const found = await readRun(this.#db, pid, run);
    if (!found) return undefined;
    this.#cache.putRun(found.run, found.outputBytes);
    return { ...found.run, outputs: [...found.run.outputs] };
  }

  async listRuns(
    pid: number,
    beforeRun: number,
    limit: number,
  ): Promise<Array<Omit<StoredRun, 'outputs' | 'stdout' | 'stderr'>>> {
    this.#assertOpen();
    await this.#committer.committed();
    return readRunSummaries(this.#db, pid, beforeRun, limit);
  }

  putCall(pid: number, run: number, call: StoredCall): void {
    const { inputHash, replay, ...record } = call;
    const row = {
      pid,
      run,
      position: call.position,
      body: JSON.stringify(record),
      input_hash: inputHash,
      replay: replay === undefined ? null : JSON.stringify(replay),
    };
    this.#committer.write((set) => set.putCall(row));
  }

  async listCalls(pid: number, run: number, after: number, limit?: number): Promise<StoredCall[]> {
    this.#assertOpen();
    await this.#committer.committed();
    return readCalls(this.#db, pid, run, after, limit);
  }

  appendEvent(event: ServerEvent, route: EventRoute): void {
    this.#counters?.useSeq(event.seq);
    const data = this.#lastData;
    // An output or log event whose data was just written with its seq is rebuilt from it on replay.
    const stored = !(
      (event.type === 'output' || event.type === 'log') &&
      data?.seq === event.seq &&
      data.pid === event.pid
    );
    this.#committer.write((set) => {
      if (this.cluster) set.noteEvent(event.seq);
      if (!stored) return;
      set.addEvent({
        seq: event.seq,
        owner: route.owner,
        pid: route.pid ?? null,
        ref: route.ref ?? null,
        stream_id: route.streamId ?? null,
        at: Date.now(),
        body: JSON.stringify(event),
      });
    });
  }

  async eventsSince(since: number, filter: StoredEventFilter): Promise<StoredEvent[]> {
    this.#assertOpen();
    await this.#committer.committed();
    return readEvents(this.#db, this.#parts.engine, since, filter, { positions: this.cluster !== undefined });
  }

  async expiredProcesses(policy: ExpiryPolicy): Promise<number[]> {
    this.#assertOpen();
    await this.#committer.committed();
    const cutoff = (policy.now ?? Date.now()) - policy.maxAgeMs;
    return readExpiredPids(
      this.#db,
      cutoff,
      { maxProcesses: policy.maxProcesses, maxBytes: policy.maxBytes ?? Number.POSITIVE_INFINITY },
      policy.limit,
    );
  }

  deleteUnownedEvents(beforeMs: number): void {
    this.#committer.write((set) => set.deleteUnownedEvents(beforeMs));
  }

  /** Adds writes of a cluster's own (hand-over, notifications) to the batch being filled. */
  writeForCluster(add: Parameters<BatchCommitter['write']>[0]): void {
    this.#committer.write(add);
  }

  /** Drops what the cache holds of process `pid` (another node changed it). */
  forget(pid: number): void {
    this.#cache.deleteProcess(pid);
  }

  flush(): void {
    this.#committer.flush();
  }

  /** Drops every pending and later write (a cluster node fenced off by another). */
  fence(): void {
    this.#committer.fence();
  }

  committed(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#committer.committed();
  }

  health(): StoreHealth {
    const problem = this.#parts.problem?.();
    if (problem) return { ok: false, code: 'STORE_UNAVAILABLE', message: problem };
    const failure = this.#committer.failure;
    if (failure === undefined) return { ok: true };
    return {
      ok: false,
      code: 'STORE_UNAVAILABLE',
      message: `the process database ${this.path} cannot be written (${failure}); writes are kept and retried`,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      // A clean stop: the next start continues exactly after the last pid and seq handed out.
      this.#counters?.storeExact();
      const left = await this.#committer.close(this.#parts.options.timeoutMs ?? 5000);
      if (left > 0)
        this.#onError(
          new Error(`${left} writes could not be committed to ${this.path} before the server stopped`),
        );
    } finally {
      await this.#db.destroy();
      await this.#parts.close();
    }
  }

  /** @throws StoreError `STORE_CLOSED` after {@link SqlStore.close}. */
  #assertOpen(): void {
    if (this.#closed)
      throw new StoreError('STORE_CLOSED', this.path, `the process database ${this.path} is closed`);
  }

  #data(seq: number, pid: number): void {
    this.#lastData = { seq, pid };
    this.#counters?.useSeq(seq);
  }
}
