import { type Expression, expressionBuilder, type QueryCreator, type SqlBool, sql } from 'kysely';
import type {
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from '../../processes/process-store.ts';
import {
  decodeValue,
  EVENT_ROW,
  LOG_ROW,
  OUTPUT_ROW,
  toProcess,
  toRun,
  toStoredEvent,
} from '../row-codec.ts';
import type { Engine } from './engine.ts';
import type { Database, Db, EventLogTable } from './tables.ts';

// The store's filtered and multi-table reads, one statement text for SQLite and PostgreSQL (the
// engine's quirks come from `Engine`). Rows are decoded by row-codec.ts.

/** The processes matching `filter`, newest (highest pid) first. */
export async function readProcesses(db: Db, filter: StoredProcessFilter): Promise<StoredProcess[]> {
  const rows = await db
    .selectFrom('processes')
    .selectAll()
    .$if(filter.owner !== undefined, (qb) => qb.where('owner', '=', filter.owner!))
    .$if(filter.state !== undefined, (qb) => qb.where('state', '=', filter.state!))
    .$if(filter.status !== undefined, (qb) =>
      filter.status === null ? qb.where('status', 'is', null) : qb.where('status', '=', filter.status!),
    )
    .$if(filter.ref !== undefined, (qb) => qb.where('ref', '=', filter.ref!))
    .$if(filter.node !== undefined, (qb) => qb.where('node', '=', filter.node!))
    .$if(filter.streamId !== undefined, (qb) => qb.where('stream_id', '=', filter.streamId!))
    .orderBy('pid', 'desc')
    .execute();
  return rows.map(toProcess);
}

/** A run with its outputs and logs, and the size of its encoded outputs (bytes); none if unknown. */
export async function readRun(
  db: Db,
  pid: number,
  run: number,
): Promise<{ run: StoredRun; outputBytes: number } | undefined> {
  const row = await db
    .selectFrom('runs')
    .selectAll()
    .where('pid', '=', pid)
    .where('run', '=', run)
    .executeTakeFirst();
  if (!row) return undefined;
  const [outputs, logs] = await Promise.all([
    db
      .selectFrom('outputs')
      .select('value')
      .where('pid', '=', pid)
      .where('run', '=', run)
      .orderBy('seq')
      .execute(),
    db
      .selectFrom('logs')
      .select(['stream', 'text'])
      .where('pid', '=', pid)
      .where('run', '=', run)
      .orderBy('seq')
      .execute(),
  ]);
  const outputBytes = outputs.reduce((sum, output) => sum + output.value.byteLength, 0);
  return {
    run: toRun(
      row,
      outputs.map((output) => decodeValue(output.value)),
      logs,
    ),
    outputBytes,
  };
}

/**
 * Idle processes to delete, oldest change first, at most `limit`: those idle since before `cutoff`
 * (epoch ms), then, for each principal (owner) with more than `maxProcesses`, its idle ones whose last
 * change is oldest, down to `maxProcesses`, and for each principal whose stored output and log bytes
 * (`processes.stored_bytes`) are over `maxBytes`, its idle ones whose last change is oldest, until the
 * rest fits. One principal's many processes or bytes never count against another's.
 */
export async function readExpiredPids(
  db: Db,
  cutoff: number,
  quota: { maxProcesses: number; maxBytes: number },
  limit: number,
): Promise<number[]> {
  const aged = (
    await db
      .selectFrom('processes')
      .select('pid')
      .where('idle_since', '<', cutoff)
      .where('state', '=', 'idle')
      .orderBy('idle_since')
      .orderBy('pid')
      .limit(limit)
      .execute()
  ).map((row) => row.pid);
  if (aged.length >= limit) return aged;
  // Per owner: its count, less the aged ones already selected, over the quota; its oldest idle
  // processes go, as many as the excess.
  const overCount = await db
    .with('over', (qc) =>
      qc
        .selectFrom('processes')
        .select((eb) => ['owner', eb(eb.fn.countAll<number>(), '-', quota.maxProcesses).as('excess')])
        .where((eb) => eb.not(eb.and([eb('idle_since', '<', cutoff), eb('state', '=', 'idle')])))
        .groupBy('owner')
        .having((eb) => eb(eb(eb.fn.countAll<number>(), '-', quota.maxProcesses), '>', 0)),
    )
    .selectFrom((qc) =>
      qc
        .selectFrom('processes as p')
        .innerJoin('over as o', 'o.owner', 'p.owner')
        .select((eb) => [
          'p.pid',
          'p.idle_since',
          'o.excess',
          eb.fn
            .agg<number>('row_number')
            .over((ob) => ob.partitionBy('p.owner').orderBy('p.idle_since').orderBy('p.pid'))
            .as('k'),
        ])
        .where('p.state', '=', 'idle')
        .where('p.idle_since', '>=', cutoff)
        .as('ranked'),
    )
    .select('pid')
    .whereRef('k', '<=', 'excess')
    .orderBy('idle_since')
    .orderBy('pid')
    .limit(limit - aged.length)
    .execute();
  if (!Number.isFinite(quota.maxBytes)) return aged.concat(overCount.map((row) => row.pid));
  // Per owner: its `stored_bytes` (the aged ones left out) over the quota; its oldest idle processes go
  // while the bytes of those before them have not covered the excess. A running sum less the row's own
  // bytes is the sum of the rows before it: (idle_since, pid) is unique, so no row has peers.
  const overBytes = await db
    .with('over', (qc) =>
      qc
        .selectFrom('processes')
        .select((eb) => ['owner', eb(eb.fn.sum<number>('stored_bytes'), '-', quota.maxBytes).as('excess')])
        .where((eb) => eb.not(eb.and([eb('idle_since', '<', cutoff), eb('state', '=', 'idle')])))
        .groupBy('owner')
        .having((eb) => eb(eb(eb.fn.sum<number>('stored_bytes'), '-', quota.maxBytes), '>', 0)),
    )
    .selectFrom((qc) =>
      qc
        .selectFrom('processes as p')
        .innerJoin('over as o', 'o.owner', 'p.owner')
        .select((eb) => [
          'p.pid',
          'p.idle_since',
          'o.excess',
          eb(
            eb.fn
              .sum<number>('p.stored_bytes')
              .over((ob) => ob.partitionBy('p.owner').orderBy('p.idle_since').orderBy('p.pid')),
            '-',
            eb.ref('p.stored_bytes'),
          ).as('before'),
        ])
        .where('p.state', '=', 'idle')
        .where('p.idle_since', '>=', cutoff)
        .as('ranked'),
    )
    .select('pid')
    .whereRef('before', '<', 'excess')
    .orderBy('idle_since')
    .orderBy('pid')
    .limit(limit - aged.length)
    .execute();
  return [
    ...new Set([...aged, ...overCount.map((row) => row.pid), ...overBytes.map((row) => row.pid)]),
  ].slice(0, limit);
}

/** Options of {@link readEvents}. */
export interface ReadEventsOptions {
  /**
   * Key events by their position in the cluster's `event_log` (returned as their `seq`) instead of
   * their `seq`. @default false
   */
  positions?: boolean;
  /**
   * Most events returned. With `positions`, the rows of the log read: the statement reads that window
   * of `event_log` by its primary key first (and ignores the other filters' selectivity), so a
   * filtered read may return fewer. @default no limit
   */
  limit?: number;
}

/**
 * Replay: the events after `since` matching `filter`, in seq order, output and log events rebuilt from
 * the `outputs` and `logs` rows they were stored as (see `toStoredEvent`). `filter.through` bounds
 * each table's rows by a range of its key. With `filter.maxBytes`, the events end with the one that
 * brings the payload (event bodies, output values and log texts as stored, text counted in UTF-8
 * bytes) to that many bytes; the first event is returned whatever `maxBytes`.
 */
export async function readEvents(
  db: Db,
  engine: Engine,
  since: number,
  filter: StoredEventFilter,
  options: ReadEventsOptions = {},
): Promise<StoredEvent[]> {
  const { from, union } = replayUnion(db, since, filter, options);
  // With positions, `limit` bounds the page of the log read first (see replayUnion).
  const limited = options.limit !== undefined && options.positions !== true;
  const maxBytes = filter.maxBytes;
  const rows =
    maxBytes === undefined
      ? await from
          .selectFrom(union.as('u'))
          .selectAll('u')
          .orderBy('u.seq')
          .$if(limited, (qb) => qb.limit(options.limit!))
          .execute()
      : await from
          .selectFrom(withBytesBefore(db, engine, union).as('b'))
          .selectAll('b')
          .where((eb) => eb.or([eb('b.n', '=', 1), eb('b.bytes_before', '<', maxBytes)]))
          .orderBy('b.seq')
          .$if(limited, (qb) => qb.limit(options.limit!))
          .execute();
  return rows.map(toEvent);
}

/**
 * The rows of a replay union with `n`, their rank in seq order, and `bytes_before`, the payload bytes
 * of the rows before them (a running sum less the row's own: seqs are unique, so no row has peers).
 */
function withBytesBefore(db: Db, engine: Engine, union: ReturnType<typeof replayUnion>['union']) {
  return db
    .selectFrom(union.as('u'))
    .selectAll('u')
    .select((eb) => {
      const size = eb.fn.coalesce(
        engine.byteLength(sql.ref('u.text')),
        engine.byteLength(sql.ref('u.value')),
      );
      return [
        eb(
          eb.fn.sum<number>(size).over((ob) => ob.orderBy('u.seq')),
          '-',
          size,
        ).as('bytes_before'),
        eb.fn
          .agg<number>('row_number')
          .over((ob) => ob.orderBy('u.seq'))
          .as('n'),
      ];
    });
}

/** A page of a cluster's event log, as the fan-in delivers it to every node. */
export interface LogPage {
  /** The events, in log order, each with its position as its `seq`. */
  events: StoredEvent[];
  /** The node that committed each event (`nodes[i]` for `events[i]`). */
  nodes: string[];
  /** The last position the page read, or `since` when it read none: the next page starts after it. */
  lastPos: number;
  /** Whether the page read `limit` rows of the log (more may follow). */
  full: boolean;
}

/**
 * The events of the log after position `since`, from at most `limit` rows of the log (PostgreSQL
 * clusters). That window of the log is read first by its primary key, so a page costs `limit` rows
 * whatever the log's size. A row of the log whose event is gone is passed over (`lastPos` is past it).
 */
export async function readLogPage(db: Db, since: number, limit: number): Promise<LogPage> {
  const { from, union } = replayUnion(db, since, {}, { positions: true, limit });
  const rows = await from
    .selectFrom('page as w')
    .leftJoin(union.as('u'), 'u.seq', 'w.pos')
    .select(['w.pos as at', 'w.node as committer'])
    .selectAll('u')
    .orderBy('w.pos')
    .execute();
  const found = rows.filter((row): row is typeof row & ReplayRow => row.kind !== null);
  return {
    events: found.map(toEvent),
    nodes: found.map((row) => row.committer),
    lastPos: rows.at(-1)?.at ?? since,
    full: rows.length === limit,
  };
}

/** The tables of a replay: the database, and the window of the log a page reads first. */
type ReplayTables = Database & { page: EventLogTable };

/**
 * A row of the replay union: an `events` row (`text` is its body), an `outputs` row (`value`) or a
 * `logs` row (`text`), with the route of its event.
 */
type ReplayRow = {
  seq: number;
  kind: number;
  text: string | null;
  value: Uint8Array | null;
  stream: string | null;
  owner: string;
  pid: number | null;
  ref: string | null;
  stream_id: string | null;
  run: number | null;
};

/** The columns a replay filters on, in one table of the union. */
interface RouteColumns {
  /** The event's key: its seq, or with positions its position in the log. */
  key: Expression<number>;
  pid: Expression<number | null>;
  owner: Expression<string>;
  ref: Expression<string | null>;
}

/**
 * The union of the events, outputs and logs after `since` matching `filter`, and where to select it
 * from (with a windowed page, the statement that reads the page of the log first).
 */
function replayUnion(db: Db, since: number, filter: StoredEventFilter, options: ReadEventsOptions) {
  const positions = options.positions === true;
  const windowed = positions && options.limit !== undefined;
  const tables = db.withTables<{ page: EventLogTable }>();
  // With positions, each table is joined to the log `g` (the page, when windowed) by its seq; `g` is
  // in the `FROM` list only then, and referred to only then.
  const log: Array<'event_log as g' | 'page as g'> = !positions
    ? []
    : windowed
      ? ['page as g']
      : ['event_log as g'];
  const matching = (table: RouteColumns) => {
    const eb = expressionBuilder<ReplayTables, never>();
    const parts: Expression<SqlBool>[] = [];
    if (!windowed) {
      parts.push(eb(table.key, '>', since));
      if (filter.through !== undefined) parts.push(eb(table.key, '<=', filter.through));
    }
    if (filter.owner !== undefined) parts.push(eb(table.owner, '=', filter.owner));
    if (filter.pid !== undefined) parts.push(eb(table.pid, '=', filter.pid));
    if (filter.ref !== undefined) parts.push(eb(table.ref, '=', filter.ref));
    return eb.and(parts);
  };
  // Each table's rows are cast to the union's row type (the builder types a NULL column as `null`).
  const events = tables
    .selectFrom(['events as e', ...log])
    .select((eb) => [
      eb.ref(positions ? 'g.pos' : 'e.seq').as('seq'),
      eb.lit(EVENT_ROW).as('kind'),
      'e.body as text',
      eb.lit(null).as('value'),
      eb.lit(null).as('stream'),
      'e.owner',
      'e.pid',
      'e.ref',
      'e.stream_id',
      eb.lit(null).as('run'),
    ])
    .$if(positions, (qb) => qb.whereRef('g.seq', '=', 'e.seq'))
    .where((eb) =>
      matching({
        key: eb.ref(positions ? 'g.pos' : 'e.seq'),
        owner: eb.ref('e.owner'),
        pid: eb.ref('e.pid'),
        ref: eb.ref('e.ref'),
      }),
    )
    .$castTo<ReplayRow>();
  const outputs = tables
    .selectFrom(['outputs as o', 'processes as p', ...log])
    .select((eb) => [
      eb.ref(positions ? 'g.pos' : 'o.seq').as('seq'),
      eb.lit(OUTPUT_ROW).as('kind'),
      eb.lit(null).as('text'),
      'o.value',
      eb.lit(null).as('stream'),
      'p.owner',
      'o.pid',
      'p.ref',
      'p.stream_id',
      'o.run',
    ])
    .whereRef('p.pid', '=', 'o.pid')
    .$if(positions, (qb) => qb.whereRef('g.seq', '=', 'o.seq'))
    .where((eb) =>
      matching({
        key: eb.ref(positions ? 'g.pos' : 'o.seq'),
        owner: eb.ref('p.owner'),
        pid: eb.ref('o.pid'),
        ref: eb.ref('p.ref'),
      }),
    )
    .$castTo<ReplayRow>();
  const logs = tables
    .selectFrom(['logs as l', 'processes as p', ...log])
    .select((eb) => [
      eb.ref(positions ? 'g.pos' : 'l.seq').as('seq'),
      eb.lit(LOG_ROW).as('kind'),
      'l.text',
      eb.lit(null).as('value'),
      'l.stream',
      'p.owner',
      'l.pid',
      'p.ref',
      'p.stream_id',
      'l.run',
    ])
    .whereRef('p.pid', '=', 'l.pid')
    .$if(positions, (qb) => qb.whereRef('g.seq', '=', 'l.seq'))
    .where((eb) =>
      matching({
        key: eb.ref(positions ? 'g.pos' : 'l.seq'),
        owner: eb.ref('p.owner'),
        pid: eb.ref('l.pid'),
        ref: eb.ref('p.ref'),
      }),
    )
    .$castTo<ReplayRow>();
  const union = events.unionAll(outputs).unionAll(logs);
  const from: QueryCreator<ReplayTables> = windowed
    ? tables.with(
        (cte) => cte('page').materialized(),
        (qc) =>
          qc
            .selectFrom('event_log')
            .select(['pos', 'seq', 'node'])
            .where('pos', '>', since)
            .$if(filter.through !== undefined, (qb) => qb.where('pos', '<=', filter.through!))
            .orderBy('pos')
            .limit(options.limit!),
      )
    : tables;
  return { from, union };
}

/** The event of a replay row, with the row's key as its `seq`. */
function toEvent(row: ReplayRow): StoredEvent {
  const stored = toStoredEvent({ ...row, data: row.kind === OUTPUT_ROW ? row.value : row.text });
  stored.event.seq = row.seq;
  return stored;
}

/** A row of the `nodes` table (PostgreSQL), as {@link readNodes} reads it. */
export interface ClusterNode {
  name: string;
  /** ISO 8601, by the database clock. */
  startedAt: string;
  renewedAt: string;
  leaseUntil: string;
  /** When the lease was released (a clean stop) or ended after it expired; absent while held. */
  stoppedAt?: string;
  /** The node that ended the lease: the node itself for a clean stop. */
  stoppedBy?: string;
  /** Whether the lease is held and not expired. */
  live: boolean;
}

/** A `timestamptz` column as ISO 8601 (UTC, milliseconds): PostgreSQL's `to_char`. */
const iso = (column: 'started_at' | 'renewed_at' | 'lease_until' | 'stopped_at') =>
  sql<string | null>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', ${'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'})`.as(
    column,
  );

/** Every row of `nodes` (PostgreSQL), by name, with whether its lease is held by the database clock. */
export async function readNodes(db: Db): Promise<ClusterNode[]> {
  const rows = await db
    .selectFrom('nodes')
    .select((eb) => [
      'name',
      iso('started_at'),
      iso('renewed_at'),
      iso('lease_until'),
      iso('stopped_at'),
      'stopped_by',
      eb.and([eb('stopped_at', 'is', null), eb('lease_until', '>=', eb.fn<Date>('now'))]).as('live'),
    ])
    .orderBy('name')
    .execute();
  return rows.map((row) => ({
    name: row.name,
    startedAt: String(row.started_at),
    renewedAt: String(row.renewed_at),
    leaseUntil: String(row.lease_until),
    ...(row.stopped_at !== null && { stoppedAt: row.stopped_at }),
    ...(row.stopped_by !== null && { stoppedBy: row.stopped_by }),
    live: row.live === true,
  }));
}

/** The processes that are not idle, counted by the node that runs them and state (clusters). */
export async function readClusterProcesses(
  db: Db,
): Promise<Array<{ node: string; state: string; count: number }>> {
  const rows = await db
    .selectFrom('processes')
    .select((eb) => ['node', 'state', eb.fn.countAll<number>().as('count')])
    .where('state', '<>', 'idle')
    .where('node', 'is not', null)
    .groupBy(['node', 'state'])
    .orderBy('node')
    .orderBy('state')
    .execute();
  return rows.map((row) => ({ node: String(row.node), state: row.state, count: Number(row.count) }));
}
