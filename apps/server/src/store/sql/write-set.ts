import { type Insertable, sql } from 'kysely';
import type { RunUpdate } from '../../processes/process-store.ts';
import type { Engine } from './engine.ts';
import type { Db, EventsTable, LogsTable, OutputsTable, ProcessesTable, RunsTable } from './tables.ts';

/** The fields of a process that change as it goes, and when it last became idle (epoch ms). */
export interface ProcessChange {
  state: string;
  status: string | null;
  runs: number;
  idleSince?: number;
}

/** Columns of a run update, as stored (absent: unchanged). */
type RunChange = Partial<Omit<RunsTable, 'pid' | 'run'>>;

/** What a cluster node adds to each of its write sets (see `cluster/`). */
export interface WriteSetNode {
  /** The node's name: written as `processes.node` of the processes it creates and changes. */
  name: string;
  /** Statements that run first in the transaction (the node's lease check). */
  before(db: Db): Promise<void>;
  /** Statements that run last, given the seqs of the set's events in order (their log positions). */
  after(db: Db, eventSeqs: number[]): Promise<void>;
}

/** The key of a run in the maps of a set. */
const runKey = (pid: number, run: number) => `${pid}:${run}`;

/**
 * The writes of one batch, merged by row: a process inserted and changed three times in a batch is
 * one row of one `INSERT`, and every kind of write is one set-based statement for all its rows (a
 * multi-row `INSERT ... ON CONFLICT`, or an `UPDATE ... FROM` a {@link Engine.rowset}), so a batch
 * costs the same few statements whatever it holds. {@link WriteSet.commit} writes it in one
 * transaction; a set that failed can be committed again as it is.
 */
export class WriteSet {
  readonly #processes = new Map<number, Insertable<ProcessesTable>>();
  readonly #processChanges = new Map<number, ProcessChange>();
  readonly #runs = new Map<string, Insertable<RunsTable>>();
  readonly #runChanges = new Map<string, { pid: number; run: number } & RunChange>();
  #outputs: Array<Insertable<OutputsTable>> = [];
  #logs: Array<Insertable<LogsTable>> = [];
  #events: Array<Insertable<EventsTable>> = [];
  readonly #bytes = new Map<number, number>();
  readonly #deleted = new Set<number>();
  readonly #counters = new Map<string, number>();
  #unownedBefore: number | undefined;
  readonly #handedOver = new Map<string, number[]>();
  #notices: Array<{ channel: string; payload: string }> = [];
  /** The seqs of every event of the set, in the order they happened (a cluster's log positions). */
  #eventOrder: number[] = [];
  /** How many writes the set took (its size for back-pressure and messages). */
  #writes = 0;

  get size(): number {
    return this.#writes;
  }

  /** Inserts or replaces a process (a replaced one keeps its `stored_bytes`). */
  putProcess(row: Insertable<ProcessesTable>): void {
    this.#writes++;
    this.#processes.set(row.pid, row);
    this.#processChanges.delete(row.pid);
  }

  changeProcess(pid: number, change: ProcessChange): void {
    this.#writes++;
    const inserted = this.#processes.get(pid);
    if (inserted) {
      inserted.state = change.state;
      inserted.status = change.status;
      inserted.runs = change.runs;
      if (change.idleSince !== undefined) inserted.idle_since = change.idleSince;
      return;
    }
    const waiting = this.#processChanges.get(pid);
    this.#processChanges.set(pid, {
      ...change,
      ...(change.idleSince === undefined &&
        waiting?.idleSince !== undefined && { idleSince: waiting.idleSince }),
    });
  }

  /** Starts run `run` (replacing any leftovers of a run with that number, here and in the database). */
  putRun(row: Insertable<RunsTable>): void {
    this.#writes++;
    const key = runKey(row.pid, row.run);
    this.#runs.set(key, row);
    this.#runChanges.delete(key);
    const leftover = (data: { pid: number; run: number }) => data.pid === row.pid && data.run === row.run;
    if (!this.#outputs.some(leftover) && !this.#logs.some(leftover)) return;
    let bytes = 0;
    for (const output of this.#outputs) if (leftover(output)) bytes += output.value.byteLength;
    for (const log of this.#logs) if (leftover(log)) bytes += Buffer.byteLength(log.text);
    this.#outputs = this.#outputs.filter((output) => !leftover(output));
    this.#logs = this.#logs.filter((log) => !leftover(log));
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) - bytes);
  }

  changeRun(pid: number, run: number, change: RunChange): void {
    this.#writes++;
    const key = runKey(pid, run);
    const inserted = this.#runs.get(key);
    if (inserted) Object.assign(inserted, change);
    else this.#runChanges.set(key, { ...this.#runChanges.get(key), ...change, pid, run });
  }

  addOutput(row: Insertable<OutputsTable>): void {
    this.#writes++;
    this.#outputs.push(row);
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) + row.value.byteLength);
  }

  addLog(row: Insertable<LogsTable>, bytes: number): void {
    this.#writes++;
    this.#logs.push(row);
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) + bytes);
  }

  addEvent(row: Insertable<EventsTable>): void {
    this.#writes++;
    this.#events.push(row);
  }

  /** Notes that event `seq` happened (stored here, or as an output or log): its place in the log. */
  noteEvent(seq: number): void {
    this.#eventOrder.push(seq);
  }

  /** Deletes a process with its runs, outputs, logs and events (also those written before this set). */
  deleteProcess(pid: number): void {
    this.#writes++;
    this.#processes.delete(pid);
    this.#processChanges.delete(pid);
    for (const [key, row] of this.#runs) if (row.pid === pid) this.#runs.delete(key);
    for (const [key, row] of this.#runChanges) if (row.pid === pid) this.#runChanges.delete(key);
    this.#outputs = this.#outputs.filter((row) => row.pid !== pid);
    this.#logs = this.#logs.filter((row) => row.pid !== pid);
    this.#events = this.#events.filter((row) => row.pid !== pid);
    this.#bytes.delete(pid);
    this.#deleted.add(pid);
  }

  /** Deletes the events of no process (intents, stream results) older than `beforeMs` (epoch ms). */
  deleteUnownedEvents(beforeMs: number): void {
    this.#writes++;
    this.#unownedBefore = Math.max(this.#unownedBefore ?? 0, beforeMs);
  }

  /** Stores the mark of counter `name` (`pid`, `seq`). */
  setCounter(name: string, value: number): void {
    this.#writes++;
    this.#counters.set(name, value);
  }

  /** Makes processes `pids` node `node`'s (a cluster's hand-over; see `cluster/`). */
  handOver(node: string, pids: number[]): void {
    this.#writes++;
    this.#handedOver.set(node, [...(this.#handedOver.get(node) ?? []), ...pids]);
  }

  /** Sends a notification when the set commits (PostgreSQL `pg_notify`). */
  notify(channel: string, payload: string): void {
    this.#writes++;
    this.#notices.push({ channel, payload });
  }

  /**
   * Writes the set in `db` (a transaction). With `node`, the node's lease is checked first, its name
   * is written on the processes it changes, and its `after` runs last.
   */
  async commit(db: Db, engine: Engine, node?: WriteSetNode): Promise<void> {
    await node?.before(db);
    if (this.#deleted.size > 0) await this.#deleteProcesses(db, engine);
    const processes = [...this.#processes.values()].map((row) => ({ ...row, node: node?.name ?? null }));
    for (const rows of chunks(processes, engine)) {
      await db
        .insertInto('processes')
        .values(rows)
        .onConflict((conflict) =>
          conflict.column('pid').doUpdateSet((eb) => {
            // A replaced record keeps its `stored_bytes`: its outputs and logs stay.
            const set: Record<string, unknown> = {};
            for (const column of Object.keys(rows[0]!))
              if (column !== 'pid') set[column] = eb.ref(`excluded.${column}` as never);
            return set;
          }),
        )
        .execute();
    }
    if (this.#runs.size > 0) await this.#putRuns(db, engine);
    if (this.#processChanges.size > 0) await this.#changeProcesses(db, engine, node?.name);
    if (this.#runChanges.size > 0) await this.#changeRuns(db, engine);
    for (const rows of chunks(this.#outputs, engine))
      await db
        .insertInto('outputs')
        .values(rows)
        .onConflict((c) => c.column('seq').doUpdateSet(excludedOf(['pid', 'run', 'value'])))
        .execute();
    for (const rows of chunks(this.#logs, engine))
      await db
        .insertInto('logs')
        .values(rows)
        .onConflict((c) => c.column('seq').doUpdateSet(excludedOf(['pid', 'run', 'stream', 'text'])))
        .execute();
    for (const rows of chunks(this.#events, engine))
      await db
        .insertInto('events')
        .values(rows)
        .onConflict((c) =>
          c.column('seq').doUpdateSet(excludedOf(['owner', 'pid', 'ref', 'stream_id', 'at', 'body'])),
        )
        .execute();
    if (this.#bytes.size > 0) {
      const rows = [...this.#bytes].map(([pid, bytes]) => ({ pid, bytes }));
      const u = engine.rowset(rows, { pid: 'integer', bytes: 'integer' }, 'u');
      await db
        .updateTable('processes')
        .from(u as never)
        .set({ stored_bytes: sql`processes.stored_bytes + u.bytes` })
        .where(sql<boolean>`processes.pid = u.pid`)
        .execute();
    }
    if (this.#unownedBefore !== undefined) {
      await db.deleteFrom('events').where('pid', 'is', null).where('at', '<', this.#unownedBefore).execute();
    }
    for (const [name, value] of this.#counters)
      await db.updateTable('counters').set({ value }).where('name', '=', name).execute();
    for (const [to, pids] of this.#handedOver) {
      const u = engine.rowset(
        pids.map((pid) => ({ pid })),
        { pid: 'integer' },
        'u',
      );
      await db
        .updateTable('processes')
        .set({ node: to })
        .where(sql<boolean>`pid IN (SELECT pid FROM ${u})`)
        .execute();
    }
    for (const { channel, payload } of this.#notices)
      await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
    await node?.after(db, this.#eventOrder);
  }

  async #deleteProcesses(db: Db, engine: Engine): Promise<void> {
    const rows = [...this.#deleted].map((pid) => ({ pid }));
    const deleted = () => engine.rowset(rows, { pid: 'integer' }, 'd');

    if (engine.kind === 'postgres') {
      await sql`DELETE FROM event_log WHERE seq IN (
          SELECT seq FROM events WHERE pid IN (SELECT pid FROM ${deleted()})
          UNION ALL SELECT seq FROM outputs WHERE pid IN (SELECT pid FROM ${deleted()})
          UNION ALL SELECT seq FROM logs WHERE pid IN (SELECT pid FROM ${deleted()}))`.execute(db);
    }
    for (const table of ['processes', 'runs', 'outputs', 'logs', 'events'] as const)
      await db.deleteFrom(table).where(sql<boolean>`pid IN (SELECT pid FROM ${deleted()})`).execute();
  }

  /** Inserts the set's new runs over any leftovers of runs with their numbers (outputs, logs, bytes). */
  async #putRuns(db: Db, engine: Engine): Promise<void> {
    const runs = [...this.#runs.values()];
    const keys = runs.map(({ pid, run }) => ({ pid, run }));
    const leftovers = () => engine.rowset(keys, { pid: 'integer', run: 'integer' }, 'k');
    // Row-value IN lets both engines look each key up in the (pid, run) index of outputs and logs.
    const ofKeys = (table: 'o' | 'l') =>
      sql`${sql.ref(`${table}.pid`)} = processes.pid AND (${sql.ref(`${table}.pid`)}, ${sql.ref(`${table}.run`)}) IN (SELECT pid, run FROM ${leftovers()})`;
    await db
      .updateTable('processes')
      .set({
        stored_bytes: sql`processes.stored_bytes
          - coalesce((SELECT sum(${engine.byteLength(sql.ref('o.value'))}) FROM outputs o WHERE ${ofKeys('o')}), 0)
          - coalesce((SELECT sum(${engine.byteLength(sql.ref('l.text'))}) FROM logs l WHERE ${ofKeys('l')}), 0)`,
      })
      .where(sql<boolean>`pid IN (SELECT pid FROM ${leftovers()})`)
      .execute();
    for (const table of ['outputs', 'logs'] as const)
      await db
        .deleteFrom(table)
        .where(sql<boolean>`(pid, run) IN (SELECT pid, run FROM ${leftovers()})`)
        .execute();
    for (const rows of chunks(runs, engine))
      await db
        .insertInto('runs')
        .values(rows.map(fullRun))
        .onConflict((c) =>
          c
            .columns(['pid', 'run'])
            .doUpdateSet(
              excludedOf([
                'state',
                'status',
                'queued_at',
                'started_at',
                'ended_at',
                'duration_ms',
                'error',
                'truncated',
              ]),
            ),
        )
        .execute();
  }

  async #changeProcesses(db: Db, engine: Engine, node: string | undefined): Promise<void> {
    const rows = [...this.#processChanges].map(([pid, change]) => ({
      pid,
      state: change.state,
      status: change.status,
      runs: change.runs,
      idle_since: change.idleSince ?? null,
    }));
    const u = engine.rowset(
      rows,
      { pid: 'integer', state: 'text', status: 'text', runs: 'integer', idle_since: 'integer' },
      'u',
    );
    await db
      .updateTable('processes')
      .from(u as never)
      .set({
        state: sql`u.state`,
        status: sql`u.status`,
        runs: sql`u.runs`,
        idle_since: sql`coalesce(u.idle_since, processes.idle_since)`,
        ...(node !== undefined && { node }),
      })
      .where(sql<boolean>`processes.pid = u.pid`)
      .execute();
  }

  async #changeRuns(db: Db, engine: Engine): Promise<void> {
    const rows = [...this.#runChanges.values()].map((change) => ({ ...fullRun(change), ...change }));
    const u = engine.rowset(
      rows.map((row) => ({
        pid: row.pid,
        run: row.run,
        state: row.state ?? null,
        status: row.status ?? null,
        queued_at: row.queued_at ?? null,
        started_at: row.started_at ?? null,
        ended_at: row.ended_at ?? null,
        duration_ms: row.duration_ms ?? null,
        error: row.error ?? null,
        truncated: row.truncated ?? null,
      })),
      {
        pid: 'integer',
        run: 'integer',
        state: 'text',
        status: 'text',
        queued_at: 'text',
        started_at: 'text',
        ended_at: 'text',
        duration_ms: 'real',
        error: 'text',
        truncated: 'integer',
      },
      'u',
    );
    // A run's fields are only ever set, never cleared, after the run is inserted: absent stays as is.
    const keep = (column: string) => sql`coalesce(${sql.ref(`u.${column}`)}, ${sql.ref(`runs.${column}`)})`;
    await db
      .updateTable('runs')
      .from(u as never)
      .set({
        state: keep('state'),
        status: keep('status'),
        queued_at: keep('queued_at'),
        started_at: keep('started_at'),
        ended_at: keep('ended_at'),
        duration_ms: keep('duration_ms'),
        error: keep('error'),
        truncated: keep('truncated'),
      } as never)
      .where(sql<boolean>`runs.pid = u.pid AND runs.run = u.run`)
      .execute();
  }
}

/** A run row with every column (absent ones null), so a replaced run keeps nothing of the old one. */
function fullRun(row: Partial<RunsTable> & { pid: number; run: number }): Insertable<RunsTable> {
  return {
    pid: row.pid,
    run: row.run,
    state: row.state ?? 'queued',
    status: row.status ?? null,
    queued_at: row.queued_at ?? null,
    started_at: row.started_at ?? null,
    ended_at: row.ended_at ?? null,
    duration_ms: row.duration_ms ?? null,
    error: row.error ?? null,
    truncated: row.truncated ?? null,
  };
}

/** `SET column = excluded.column` for each of `columns` (an upsert's new values). */
function excludedOf<T extends string>(columns: T[]) {
  return (eb: { ref(name: string): unknown }) =>
    Object.fromEntries(columns.map((column) => [column, eb.ref(`excluded.${column}`)])) as never;
}

/** `rows` cut into multi-row statements under the engine's bound-parameter limit. */
function chunks<T extends object>(rows: readonly T[], engine: Engine): T[][] {
  if (rows.length === 0) return [];
  const perRow = Object.keys(rows[0]!).length + 1;
  const size = Math.max(1, Math.floor(engine.maxParams / perRow));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** The columns of the run fields of a {@link RunUpdate}, as stored. */
export function runColumns(update: RunUpdate): RunChange {
  const change: RunChange = {};
  if ('state' in update) change.state = update.state!;
  if ('status' in update) change.status = update.status ?? null;
  if ('queuedAt' in update) change.queued_at = update.queuedAt ?? null;
  if ('startedAt' in update) change.started_at = update.startedAt ?? null;
  if ('endedAt' in update) change.ended_at = update.endedAt ?? null;
  if ('durationMs' in update) change.duration_ms = update.durationMs ?? null;
  if ('error' in update) change.error = update.error === undefined ? null : JSON.stringify(update.error);
  if ('truncated' in update)
    change.truncated = update.truncated === undefined ? null : update.truncated ? 1 : 0;
  return change;
}
