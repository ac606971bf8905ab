import type { StatementSync } from 'node:sqlite';
import type {
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from '../processes/process-store.ts';
import { decodeValue, EVENT_ROW, LOG_ROW, OUTPUT_ROW, toProcess, toRun, toStoredEvent } from './row-codec.ts';

// The SQLite store's filtered and multi-table reads. `read(sql)` gives a statement that sees every
// pending write (the store commits them first); rows are decoded by row-codec.ts.

type Read = (sql: string) => StatementSync;

/** The processes matching `filter`, newest first. */
export function readProcesses(read: Read, filter: StoredProcessFilter): StoredProcess[] {
  const where: string[] = [];
  const params: Array<string | null> = [];
  if (filter.owner !== undefined) where.push('owner = ?') && params.push(filter.owner);
  if (filter.state !== undefined) where.push('state = ?') && params.push(filter.state);
  if (filter.status === null) where.push('status IS NULL');
  else if (filter.status !== undefined) where.push('status = ?') && params.push(filter.status);
  if (filter.ref !== undefined) where.push('ref = ?') && params.push(filter.ref);
  if (filter.node !== undefined) where.push('node = ?') && params.push(filter.node);
  if (filter.streamId !== undefined) where.push('stream_id = ?') && params.push(filter.streamId);
  const sql = `SELECT * FROM processes${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY pid DESC`;
  return read(sql)
    .all(...params)
    .map((row) => toProcess(row as Parameters<typeof toProcess>[0]));
}

/** A run with its outputs and logs, and the size of its encoded outputs (bytes); none if unknown. */
export function readRun(
  read: Read,
  pid: number,
  run: number,
): { run: StoredRun; outputBytes: number } | undefined {
  const row = read('SELECT * FROM runs WHERE pid = ? AND run = ?').get(pid, run);
  if (!row) return undefined;
  let outputBytes = 0;
  const outputs = read('SELECT value FROM outputs WHERE pid = ? AND run = ? ORDER BY seq')
    .all(pid, run)
    .map((output) => {
      outputBytes += (output.value as Uint8Array).byteLength;
      return decodeValue(output.value as Uint8Array);
    });
  const logs = read('SELECT stream, text FROM logs WHERE pid = ? AND run = ? ORDER BY seq').all(pid, run);
  const found = toRun(row as Parameters<typeof toRun>[0], outputs, logs as Parameters<typeof toRun>[2]);
  return { run: found, outputBytes };
}

/**
 * Replay: the events after `since` matching `filter`, in seq order, with output and log events
 * rebuilt from the `outputs` and `logs` rows they were stored as (see `toStoredEvent`). With
 * `filter.through`, each table is read as a range of its `seq` primary key, so the work is bounded by
 * the window whatever the other filters select; with `filter.maxBytes`, reading stops at that many
 * bytes of payload.
 */
export function readEvents(read: Read, since: number, filter: StoredEventFilter): StoredEvent[] {
  const where = (alias: string, owned: string) => {
    const parts = [`${alias}.seq > :since`];
    if (filter.through !== undefined) parts.push(`${alias}.seq <= :through`);
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
  if (filter.through !== undefined) params.through = filter.through;
  const found: StoredEvent[] = [];
  let bytes = 0;
  // The three tables are merged in primary-key order, so stopping early reads no further rows.
  for (const row of read(sql).iterate(params)) {
    found.push(toStoredEvent(row as Parameters<typeof toStoredEvent>[0]));
    const data = row.data as string | Uint8Array;
    bytes += typeof data === 'string' ? data.length : data.byteLength;
    if (filter.maxBytes !== undefined && bytes >= filter.maxBytes) break;
  }
  return found;
}

/**
 * Idle processes to delete, oldest change first, at most `limit`: those idle since before `cutoff`
 * (epoch ms), then, for each principal (owner) with more than `maxProcesses`, its idle ones whose last
 * change is oldest, down to `maxProcesses`, and for each principal whose stored output and log bytes
 * (`processes.stored_bytes`) are over `maxBytes`, its idle ones whose last change is oldest, until the
 * rest fits. One principal's
 * many processes or bytes never count against another's.
 */
export function readExpiredPids(
  read: Read,
  cutoff: number,
  quota: { maxProcesses: number; maxBytes: number },
  limit: number,
): number[] {
  const pids = (sql: string, ...params: number[]) =>
    read(sql)
      .all(...params)
      .map((row) => row.pid as number);
  const aged = pids(
    "SELECT pid FROM processes WHERE idle_since < ? AND state = 'idle' ORDER BY idle_since, pid LIMIT ?",
    cutoff,
    limit,
  );
  if (aged.length >= limit) return aged;
  // Per owner: its count, less the aged ones already selected, over the quota.
  const overCount = pids(
    `WITH over AS (
       SELECT owner, count(*) - ? AS excess FROM processes
        WHERE NOT (idle_since < ? AND state = 'idle')
        GROUP BY owner HAVING excess > 0
     )
     SELECT pid FROM (
       SELECT p.pid, p.idle_since, o.excess,
              row_number() OVER (PARTITION BY p.owner ORDER BY p.idle_since, p.pid) AS k
         FROM processes p JOIN over o ON o.owner = p.owner
        WHERE p.state = 'idle' AND p.idle_since >= ?
     ) WHERE k <= excess ORDER BY idle_since, pid LIMIT ?`,
    quota.maxProcesses,
    cutoff,
    cutoff,
    limit - aged.length,
  );
  if (!Number.isFinite(quota.maxBytes)) return aged.concat(overCount);
  // Per owner: its `stored_bytes` (the aged ones left out) over the quota; its oldest idle processes
  // go while the bytes of those before them have not covered the excess. One row per process is read.
  const overBytes = pids(
    `WITH over AS (
       SELECT owner, sum(stored_bytes) - ? AS excess FROM processes
        WHERE NOT (idle_since < ? AND state = 'idle')
        GROUP BY owner HAVING excess > 0
     )
     SELECT pid FROM (
       SELECT p.pid, p.idle_since, o.excess,
              coalesce(sum(p.stored_bytes) OVER (
                PARTITION BY p.owner ORDER BY p.idle_since, p.pid
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM processes p JOIN over o ON o.owner = p.owner
        WHERE p.state = 'idle' AND p.idle_since >= ?
     ) WHERE before < excess ORDER BY idle_since, pid LIMIT ?`,
    quota.maxBytes,
    cutoff,
    cutoff,
    limit - aged.length,
  );
  return [...new Set([...aged, ...overCount, ...overBytes])].slice(0, limit);
}
