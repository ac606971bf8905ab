import { sql } from 'kysely';
import type { StoredProcess, StoredProcessFilter, StoredRun } from '../../processes/process-store.ts';
import { decodeValue, toProcess, toRun } from '../row-codec.ts';
import type { Db } from './tables.ts';

// The store's filtered and multi-table reads, one statement text for SQLite and PostgreSQL (the
// engine's quirks come from `Engine`). Rows are decoded by row-codec.ts.

/** The processes matching `filter`, newest (highest pid) first, at most `filter.limit`. */
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
    .$if(filter.session !== undefined, (qb) => qb.where('session', '=', filter.session!))
    .$if(filter.beforePid !== undefined, (qb) => qb.where('pid', '<', filter.beforePid!))
    .orderBy('pid', 'desc')
    .$if(filter.limit !== undefined, (qb) => qb.limit(filter.limit!))
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

/** The runs of process `pid` numbered below `beforeRun`, highest first, at most `limit`, without outputs and logs. */
export async function readRunSummaries(
  db: Db,
  pid: number,
  beforeRun: number,
  limit: number,
): Promise<Array<Omit<StoredRun, 'outputs' | 'stdout' | 'stderr'>>> {
  const rows = await db
    .selectFrom('runs')
    .selectAll()
    .where('pid', '=', pid)
    .where('run', '<', beforeRun)
    .orderBy('run', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const { outputs: _outputs, stdout: _stdout, stderr: _stderr, ...run } = toRun(row, [], []);
    return run;
  });
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
  const remaining = limit - aged.length;
  const overCount = await readOverQuota(db, cutoff, 'processes', quota.maxProcesses, remaining);
  if (!Number.isFinite(quota.maxBytes)) return aged.concat(overCount);
  const overBytes = await readOverQuota(db, cutoff, 'bytes', quota.maxBytes, remaining);
  return [...new Set([...aged, ...overCount, ...overBytes])].slice(0, limit);
}

/**
 * For each owner whose processes (or their `stored_bytes`), less the aged ones (idle since before
 * `cutoff`), are over `max`: its idle processes whose last change is oldest, while the processes (or
 * bytes) of those before them have not covered the excess; at most `limit`, oldest change first.
 */
async function readOverQuota(
  db: Db,
  cutoff: number,
  measure: 'processes' | 'bytes',
  max: number,
  limit: number,
): Promise<number[]> {
  // A process weighs 1 when counting processes, its stored bytes when counting bytes.
  const weight = (column: 'stored_bytes' | 'p.stored_bytes') =>
    measure === 'bytes' ? sql.ref<number>(column) : sql.lit(1);
  const rows = await db
    .with('over', (qc) =>
      qc
        .selectFrom('processes')
        .select((eb) => ['owner', eb(eb.fn.sum<number>(weight('stored_bytes')), '-', max).as('excess')])
        .where((eb) => eb.not(eb.and([eb('idle_since', '<', cutoff), eb('state', '=', 'idle')])))
        .groupBy('owner')
        .having((eb) => eb(eb(eb.fn.sum<number>(weight('stored_bytes')), '-', max), '>', 0)),
    )
    .selectFrom((qc) =>
      qc
        .selectFrom('processes as p')
        .innerJoin('over as o', 'o.owner', 'p.owner')
        .select((eb) => [
          'p.pid',
          'p.idle_since',
          'o.excess',
          // A running sum less the row's own weight is the sum of the rows before it: (idle_since,
          // pid) is unique, so no row has peers.
          eb(
            eb.fn
              .sum<number>(weight('p.stored_bytes'))
              .over((ob) => ob.partitionBy('p.owner').orderBy('p.idle_since').orderBy('p.pid')),
            '-',
            weight('p.stored_bytes'),
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
    .limit(limit)
    .execute();
  return rows.map((row) => row.pid);
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
