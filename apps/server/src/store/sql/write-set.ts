import { type CompiledQuery, type Insertable, sql } from 'kysely';
import type { RunUpdate } from '../../processes/process-store.ts';
import { NO_RUN_CHANGE, statementsOf } from './batch-statements.ts';
import type { Engine } from './engine.ts';
import type {
  CallsTable,
  Db,
  EventsTable,
  LogsTable,
  ProcessesTable,
  RunFilesTable,
  RunsTable,
} from './tables.ts';

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
  /** The statement that runs first in the transaction (the node's lease check). */
  before: CompiledQuery;
  /** Statements that run last, given the seqs of the set's events in order (their log positions). */
  after(eventSeqs: number[]): CompiledQuery[];
}

/** The key of a run in the maps of a set. */
const runKey = (pid: number, run: number) => `${pid}:${run}`;

/**
 * The writes of one batch, merged by row: a process inserted and changed three times in a batch is
 * one row of one `INSERT`, and every kind of write is one set-based statement for all its rows (an
 * `INSERT ... SELECT ... ON CONFLICT` or an `UPDATE ... FROM` a {@link Engine.rowset}, compiled once
 * and given the rows as one JSON parameter), so a batch costs the same few statements whatever it
 * holds. {@link WriteSet.statements} are run in one transaction by the engine's opener; a set that
 * failed can be written again as it is.
 */
export class WriteSet {
  readonly #processes = new Map<number, Insertable<ProcessesTable>>();
  readonly #processChanges = new Map<number, ProcessChange>();
  readonly #runs = new Map<string, Insertable<RunsTable>>();
  /** Runs started again over what a run with their number may have left in the database. */
  readonly #replaced = new Map<string, { pid: number; run: number }>();
  readonly #runChanges = new Map<string, { pid: number; run: number; cleared: string } & RunChange>();
  #outputs: OutputRow[] = [];
  #logs: Array<Insertable<LogsTable>> = [];
  #events: Array<Insertable<EventsTable>> = [];
  #files: Array<Insertable<RunFilesTable>> = [];
  /** Calls by `pid:run:position` (a call written again replaces its row). */
  readonly #calls = new Map<string, Insertable<CallsTable>>();
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

  /**
   * Starts run `run`, replacing any leftovers of a run with that number here and, when `replacing`
   * (the run may have been stored before), in the database.
   */
  putRun(row: Insertable<RunsTable>, replacing: boolean): void {
    this.#writes++;
    const key = runKey(row.pid, row.run);
    this.#runs.set(key, row);
    if (replacing) this.#replaced.set(key, { pid: row.pid, run: row.run });
    this.#runChanges.delete(key);
    const leftover = (data: { pid: number; run: number }) => data.pid === row.pid && data.run === row.run;
    this.#files = this.#files.filter((file) => !leftover(file));
    for (const [callKey, call] of this.#calls) if (leftover(call)) this.#calls.delete(callKey);
    if (!this.#outputs.some(leftover) && !this.#logs.some(leftover)) return;
    let bytes = 0;
    for (const output of this.#outputs) if (leftover(output)) bytes += Buffer.byteLength(output.json);
    for (const log of this.#logs) if (leftover(log)) bytes += Buffer.byteLength(log.text);
    this.#outputs = this.#outputs.filter((output) => !leftover(output));
    this.#logs = this.#logs.filter((log) => !leftover(log));
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) - bytes);
  }

  changeRun(pid: number, run: number, change: RunChange): void {
    this.#writes++;
    const key = runKey(pid, run);
    const inserted = this.#runs.get(key);
    if (inserted) {
      Object.assign(inserted, change);
      return;
    }
    const previous = this.#runChanges.get(key);
    const cleared = new Set(previous?.cleared.split(',').filter(Boolean));
    for (const [column, value] of Object.entries(change))
      if (value === null) cleared.add(column);
      else cleared.delete(column);
    this.#runChanges.set(key, { ...previous, ...change, pid, run, cleared: `,${[...cleared].join(',')},` });
  }

  /** Adds an output: `json`, its value in the output encoding as JSON text (stored as UTF-8 bytes). */
  addOutput(row: OutputRow): void {
    this.#writes++;
    this.#outputs.push(row);
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) + Buffer.byteLength(row.json));
  }

  addLog(row: Insertable<LogsTable>, bytes: number): void {
    this.#writes++;
    this.#logs.push(row);
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) + bytes);
  }

  /** Adds a file of a run (its bytes count in `stored_bytes`); one of the same name already there stays. */
  addFile(row: Insertable<RunFilesTable>): void {
    this.#writes++;
    this.#files.push(row);
    this.#bytes.set(row.pid, (this.#bytes.get(row.pid) ?? 0) + row.data.byteLength);
  }

  /** Inserts or replaces the row of a call. */
  putCall(row: Insertable<CallsTable>): void {
    this.#writes++;
    this.#calls.set(`${row.pid}:${row.run}:${row.position}`, row);
  }

  addEvent(row: Insertable<EventsTable>): void {
    this.#writes++;
    this.#events.push(row);
  }

  /** Notes that event `seq` happened (stored here, or as an output or log): its place in the log. */
  noteEvent(seq: number): void {
    this.#eventOrder.push(seq);
  }

  /** Deletes a process with its runs, outputs, logs, calls and events (also those written before this set). */
  deleteProcess(pid: number): void {
    this.#writes++;
    this.#processes.delete(pid);
    this.#processChanges.delete(pid);
    for (const [key, row] of this.#runs) if (row.pid === pid) this.#runs.delete(key);
    for (const [key, row] of this.#replaced) if (row.pid === pid) this.#replaced.delete(key);
    for (const [key, row] of this.#runChanges) if (row.pid === pid) this.#runChanges.delete(key);
    this.#outputs = this.#outputs.filter((row) => row.pid !== pid);
    this.#logs = this.#logs.filter((row) => row.pid !== pid);
    this.#events = this.#events.filter((row) => row.pid !== pid);
    this.#files = this.#files.filter((row) => row.pid !== pid);
    for (const [key, row] of this.#calls) if (row.pid === pid) this.#calls.delete(key);
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
   * The statements that write the set, in order, to run in one transaction (`db` compiles them; it
   * runs nothing). With `node`, the node's lease check comes first, its name is written on the
   * processes it changes, and its last statements (the events' log positions) come last.
   */
  statements(db: Db, engine: Engine, node?: WriteSetNode): CompiledQuery[] {
    const out: CompiledQuery[] = [];
    if (node) out.push(node.before);
    if (this.#deleted.size > 0) out.push(...this.#deleteProcesses(db, engine));
    const statements = statementsOf(db, engine);
    const add = (statement: CompiledQuery, rows: readonly unknown[]) => {
      if (rows.length > 0) out.push({ ...statement, parameters: [JSON.stringify(rows)] });
    };
    add(
      statements.putProcesses,
      [...this.#processes.values()].map((row) => ({ ...row, node: node?.name ?? null })),
    );
    if (this.#replaced.size > 0) out.push(...this.#deleteLeftovers(db, engine));
    add(statements.putRuns, [...this.#runs.values()].map(fullRun));
    add(
      statements.changeProcesses,
      [...this.#processChanges].map(([pid, change]) => ({
        pid,
        state: change.state,
        status: change.status,
        runs: change.runs,
        idle_since: change.idleSince ?? null,
        node: node?.name ?? null,
      })),
    );
    add(
      statements.changeRuns,
      [...this.#runChanges.values()].map((change) => ({ ...NO_RUN_CHANGE, ...change })),
    );
    add(statements.putOutputs, this.#outputs);
    add(statements.putLogs, this.#logs);
    add(statements.putEvents, this.#events);
    add(statements.putCalls, [...this.#calls.values()]);
    // Bytes do not travel in a JSON row set: one bound statement per file.
    for (const file of this.#files)
      out.push(
        db
          .insertInto('run_files')
          .values(file)
          .onConflict((oc) => oc.columns(['pid', 'run', 'name']).doNothing())
          .compile(),
      );
    add(
      statements.addBytes,
      [...this.#bytes].map(([pid, bytes]) => ({ pid, bytes })),
    );
    if (this.#unownedBefore !== undefined)
      out.push(
        db.deleteFrom('events').where('pid', 'is', null).where('at', '<', this.#unownedBefore).compile(),
      );
    for (const [name, value] of this.#counters)
      out.push(db.updateTable('counters').set({ value }).where('name', '=', name).compile());
    for (const [to, pids] of this.#handedOver) {
      const u = engine.rowset(
        pids.map((pid) => ({ pid })),
        { pid: 'integer' },
        'u',
      );
      out.push(
        db
          .updateTable('processes')
          .set({ node: to })
          .where(sql<boolean>`pid IN (SELECT pid FROM ${u})`)
          .compile(),
      );
    }
    for (const { channel, payload } of this.#notices)
      out.push(sql`SELECT pg_notify(${channel}, ${payload})`.compile(db));
    if (node) out.push(...node.after(this.#eventOrder));
    return out;
  }

  #deleteProcesses(db: Db, engine: Engine): CompiledQuery[] {
    const rows = [...this.#deleted].map((pid) => ({ pid }));
    const deleted = () => engine.rowset(rows, { pid: 'integer' }, 'd');
    const out: CompiledQuery[] = [];
    if (engine.kind === 'postgres') {
      out.push(
        sql`DELETE FROM event_log WHERE seq IN (
          SELECT seq FROM events WHERE pid IN (SELECT pid FROM ${deleted()})
          UNION ALL SELECT seq FROM outputs WHERE pid IN (SELECT pid FROM ${deleted()})
          UNION ALL SELECT seq FROM logs WHERE pid IN (SELECT pid FROM ${deleted()}))`.compile(db),
      );
    }
    for (const table of ['processes', 'runs', 'outputs', 'logs', 'events', 'run_files', 'calls'] as const)
      out.push(db.deleteFrom(table).where(sql<boolean>`pid IN (SELECT pid FROM ${deleted()})`).compile());
    return out;
  }

  /** Deletes what runs started again may have left in the database (outputs, logs, files, their bytes, calls). */
  #deleteLeftovers(db: Db, engine: Engine): CompiledQuery[] {
    const leftovers = () =>
      engine.rowset([...this.#replaced.values()], { pid: 'integer', run: 'integer' }, 'k');
    // Row-value IN lets both engines look each key up in the (pid, run) index of outputs and logs.
    const ofKeys = (table: 'o' | 'l' | 'f') =>
      sql`${sql.ref(`${table}.pid`)} = processes.pid AND (${sql.ref(`${table}.pid`)}, ${sql.ref(`${table}.run`)}) IN (SELECT pid, run FROM ${leftovers()})`;
    return [
      db
        .updateTable('processes')
        .set({
          stored_bytes: sql`processes.stored_bytes
          - coalesce((SELECT sum(${engine.byteLength(sql.ref('o.value'))}) FROM outputs o WHERE ${ofKeys('o')}), 0)
          - coalesce((SELECT sum(${engine.byteLength(sql.ref('l.text'))}) FROM logs l WHERE ${ofKeys('l')}), 0)
          - coalesce((SELECT sum(${engine.byteLength(sql.ref('f.data'))}) FROM run_files f WHERE ${ofKeys('f')}), 0)`,
        })
        .where(sql<boolean>`pid IN (SELECT pid FROM ${leftovers()})`)
        .compile(),
      ...(['outputs', 'logs', 'run_files', 'calls'] as const).map((table) =>
        db
          .deleteFrom(table)
          .where(sql<boolean>`(pid, run) IN (SELECT pid, run FROM ${leftovers()})`)
          .compile(),
      ),
    ];
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
    warnings: row.warnings ?? null,
  };
}

/** An output to store: its value in the output encoding, as JSON text. */
export interface OutputRow {
  seq: number;
  pid: number;
  run: number;
  json: string;
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
  if ('warnings' in update)
    change.warnings = update.warnings?.length ? JSON.stringify(update.warnings) : null;
  return change;
}
