import { type Expression, expressionBuilder, type QueryCreator, type SqlBool, sql } from 'kysely';
import type { StoredEvent, StoredEventFilter } from '../../processes/process-store.ts';
import { EVENT_ROW, LOG_ROW, OUTPUT_ROW, toStoredEvent } from '../row-codec.ts';
import type { Engine } from './engine.ts';
import type { Database, Db, EventLogTable } from './tables.ts';

// Replay: the stored events after a seq (or a cluster's log position), as one union of the `events`,
// `outputs` and `logs` tables, the same statement text for SQLite and PostgreSQL.

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
