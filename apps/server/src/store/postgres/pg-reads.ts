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
import type { ClusterNode } from './pg-cluster.ts';
import type { PgParam } from './pg-protocol.ts';

// The Postgres store's filtered and multi-table reads, the counterparts of store-reads.ts. `read`
// sends the pending writes first, so it sees them; `?` placeholders are numbered by the store.

type Read = (sql: string, params: PgParam[]) => Promise<Array<Record<string, unknown>>>;
type Row = Parameters<typeof toProcess>[0];

/** The processes matching `filter`, newest first. */
export async function readPgProcesses(read: Read, filter: StoredProcessFilter): Promise<StoredProcess[]> {
  const where: string[] = [];
  const params: PgParam[] = [];
  if (filter.owner !== undefined) where.push('owner = ?') && params.push(filter.owner);
  if (filter.state !== undefined) where.push('state = ?') && params.push(filter.state);
  if (filter.status === null) where.push('status IS NULL');
  else if (filter.status !== undefined) where.push('status = ?') && params.push(filter.status);
  if (filter.ref !== undefined) where.push('ref = ?') && params.push(filter.ref);
  if (filter.node !== undefined) where.push('node = ?') && params.push(filter.node);
  if (filter.streamId !== undefined) where.push('stream_id = ?') && params.push(filter.streamId);
  const sql = `SELECT * FROM processes${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY pid DESC`;
  return (await read(sql, params)).map((row) => toProcess(row as Row));
}

/** A run with its outputs and logs, and the size of its encoded outputs (bytes); none if unknown. */
export async function readPgRun(
  read: Read,
  pid: number,
  run: number,
): Promise<{ run: StoredRun; outputBytes: number } | undefined> {
  const row = (await read('SELECT * FROM runs WHERE pid = ? AND run = ?', [pid, run]))[0];
  if (!row) return undefined;
  let outputBytes = 0;
  const outputs = (await read('SELECT value FROM outputs WHERE pid = ? AND run = ? ORDER BY seq', [pid, run])).map(
    (output) => {
      outputBytes += (output.value as Uint8Array).byteLength;
      return decodeValue(output.value as Uint8Array);
    },
  );
  const logs = await read('SELECT stream, text FROM logs WHERE pid = ? AND run = ? ORDER BY seq', [pid, run]);
  return { run: toRun(row as Row, outputs, logs as Row[]), outputBytes };
}

/**
 * The statement of a replay: the events after `since` matching `filter`, in order, output and log
 * events rebuilt from their `outputs` and `logs` rows (as in the SQLite store). By default events are
 * keyed by their `seq`; with `positions` (a cluster) by their position in `event_log`, which is
 * returned as `seq`. `limit` bounds the rows (with `positions`: the rows of the log read, so a
 * filtered page may hold fewer). `filter.maxBytes` ends the result with the event that brings the
 * payload to that many bytes.
 */
export function pgEventsQuery(
  since: number,
  filter: StoredEventFilter,
  options: { positions?: boolean; limit?: number } = {},
): { sql: string; params: PgParam[] } {
  const params: PgParam[] = [since];
  const named: Record<string, number> = { since: 1 };
  const bind = (name: string, value: PgParam) => {
    named[name] ??= params.push(value);
    return `$${named[name]}`;
  };
  const key = (alias: string) => (options.positions ? 'g.pos' : `${alias}.seq`);
  // A cluster's rows also say which node committed them. A page of the whole log (the fan-in) reads a
  // window of the log by its primary key first, whatever the statistics say; a filtered read (a
  // replay, a process's events) starts from its filter's rows and looks their positions up.
  const node = options.positions ? ', g.node' : '';
  const windowed = options.positions === true && options.limit !== undefined;
  const from = (table: string, alias: string) => {
    if (!options.positions) return `${table} ${alias}`;
    return `${windowed ? 'window_' : 'event_log'} g JOIN ${table} ${alias} ON ${alias}.seq = g.seq`;
  };
  const where = (alias: string, owned: string) => {
    const parts = windowed ? [] : [`${key(alias)} > $1`];
    if (filter.through !== undefined && !windowed)
      parts.push(`${key(alias)} <= ${bind('through', filter.through)}`);
    if (filter.owner !== undefined) parts.push(`${owned}.owner = ${bind('owner', filter.owner)}`);
    if (filter.pid !== undefined) parts.push(`${alias}.pid = ${bind('pid', filter.pid)}`);
    if (filter.ref !== undefined) parts.push(`${owned}.ref = ${bind('ref', filter.ref)}`);
    return parts.length > 0 ? parts.join(' AND ') : 'true';
  };
  const window = windowed
    ? `WITH window_ AS MATERIALIZED (
         SELECT pos, seq, node FROM event_log WHERE pos > $1${
           filter.through === undefined ? '' : ` AND pos <= ${bind('through', filter.through)}`
         } ORDER BY pos LIMIT ${bind('limit', options.limit!)}
       )`
    : '';
  const union = `
      SELECT ${key('e')} AS seq, ${EVENT_ROW} AS kind, convert_to(e.body, 'UTF8') AS data, NULL::text AS stream, e.owner, e.pid, e.ref, e.stream_id, NULL::integer AS run${node}
        FROM ${from('events', 'e')} WHERE ${where('e', 'e')}
      UNION ALL
      SELECT ${key('o')}, ${OUTPUT_ROW}, o.value, NULL, p.owner, o.pid, p.ref, p.stream_id, o.run${node}
        FROM ${from('outputs', 'o')} JOIN processes p ON p.pid = o.pid WHERE ${where('o', 'p')}
      UNION ALL
      SELECT ${key('l')}, ${LOG_ROW}, convert_to(l.text, 'UTF8'), l.stream, p.owner, l.pid, p.ref, p.stream_id, l.run${node}
        FROM ${from('logs', 'l')} JOIN processes p ON p.pid = l.pid WHERE ${where('l', 'p')}`;
  const limit = options.limit === undefined || windowed ? '' : ` LIMIT ${bind('limit', options.limit)}`;
  if (filter.maxBytes === undefined) return { sql: `${window}${union}\n      ORDER BY seq${limit}`, params };
  // Up to and including the event that brings the payload to maxBytes.
  const sql = `${window}
      SELECT * FROM (
        SELECT u.*, sum(octet_length(u.data)) OVER (ORDER BY u.seq) - octet_length(u.data) AS bytes_before
          FROM (${union}) u
      ) b WHERE bytes_before < ${bind('maxBytes', filter.maxBytes)}
      ORDER BY seq${limit}`;
  return { sql, params };
}

/**
 * Events from the rows of {@link pgEventsQuery}. An event stored whole gets the row's `seq` (its
 * position, in a cluster).
 */
export function decodePgEvents(rows: Array<Record<string, unknown>>): StoredEvent[] {
  const text = new TextDecoder();
  return rows.map((row) => {
    const stored = toStoredEvent({
      ...(row as Row),
      data: row.kind === OUTPUT_ROW ? (row.data as Uint8Array) : text.decode(row.data as Uint8Array),
    } as Row);
    stored.event.seq = row.seq as number;
    return stored;
  });
}

/** Replay: the rows of {@link pgEventsQuery}, decoded. */
export async function readPgEvents(
  read: Read,
  since: number,
  filter: StoredEventFilter,
  positions = false,
): Promise<StoredEvent[]> {
  const { sql, params } = pgEventsQuery(since, filter, { positions });
  // Placeholders are already numbered: `?` does not occur in this statement.
  return decodePgEvents(await read(sql, params));
}

/** Idle processes to delete, oldest change first, at most `limit` (the rule of `readExpiredPids`). */
export async function readPgExpiredPids(
  read: Read,
  cutoff: number,
  quota: { maxProcesses: number; maxBytes: number },
  limit: number,
): Promise<number[]> {
  const pids = async (sql: string, params: PgParam[]) =>
    (await read(sql, params)).map((row) => Number(row.pid));
  const aged = await pids(
    "SELECT pid FROM processes WHERE idle_since < ? AND state = 'idle' ORDER BY idle_since, pid LIMIT ?",
    [cutoff, limit],
  );
  if (aged.length >= limit) return aged;
  const overCount = await pids(
    `WITH over AS (
       SELECT owner, count(*) - ? AS excess FROM processes
        WHERE NOT (idle_since < ? AND state = 'idle')
        GROUP BY owner HAVING count(*) - ? > 0
     )
     SELECT pid FROM (
       SELECT p.pid, p.idle_since, o.excess,
              row_number() OVER (PARTITION BY p.owner ORDER BY p.idle_since, p.pid) AS k
         FROM processes p JOIN over o ON o.owner = p.owner
        WHERE p.state = 'idle' AND p.idle_since >= ?
     ) ranked WHERE k <= excess ORDER BY idle_since, pid LIMIT ?`,
    [quota.maxProcesses, cutoff, quota.maxProcesses, cutoff, limit - aged.length],
  );
  if (!Number.isFinite(quota.maxBytes)) return aged.concat(overCount);
  const overBytes = await pids(
    `WITH over AS (
       SELECT owner, sum(stored_bytes) - ? AS excess FROM processes
        WHERE NOT (idle_since < ? AND state = 'idle')
        GROUP BY owner HAVING sum(stored_bytes) - ? > 0
     )
     SELECT pid FROM (
       SELECT p.pid, p.idle_since, o.excess,
              coalesce(sum(p.stored_bytes) OVER (
                PARTITION BY p.owner ORDER BY p.idle_since, p.pid
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM processes p JOIN over o ON o.owner = p.owner
        WHERE p.state = 'idle' AND p.idle_since >= ?
     ) ranked WHERE before < excess ORDER BY idle_since, pid LIMIT ?`,
    [quota.maxBytes, cutoff, quota.maxBytes, cutoff, limit - aged.length],
  );
  return [...new Set([...aged, ...overCount, ...overBytes])].slice(0, limit);
}

/** A `timestamptz` column as ISO 8601 (UTC, milliseconds). */
const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;

/** Every row of `nodes`, by name, with whether its lease is held by the database clock. */
export async function readPgNodes(read: Read): Promise<ClusterNode[]> {
  const rows = await read(
    `SELECT name, ${['started_at', 'renewed_at', 'lease_until', 'stopped_at'].map(iso).join(', ')}, stopped_by,
       (stopped_at IS NULL AND lease_until >= now()) AS live
     FROM nodes ORDER BY name`,
    [],
  );
  return rows.map((row) => ({
    name: String(row.name),
    startedAt: String(row.started_at),
    renewedAt: String(row.renewed_at),
    leaseUntil: String(row.lease_until),
    ...(row.stopped_at !== null && { stoppedAt: String(row.stopped_at) }),
    ...(row.stopped_by !== null && { stoppedBy: String(row.stopped_by) }),
    live: row.live === true,
  }));
}

/** The processes that are not idle, counted by the node that runs them and state (cluster mode). */
export async function readPgClusterProcesses(
  read: Read,
): Promise<Array<{ node: string; state: string; count: number }>> {
  return (await read(
    `SELECT node, state, count(*) AS count FROM processes
      WHERE state <> 'idle' AND node IS NOT NULL GROUP BY node, state ORDER BY node, state`,
    [],
  )).map((row) => ({ node: String(row.node), state: String(row.state), count: Number(row.count) }));
}
