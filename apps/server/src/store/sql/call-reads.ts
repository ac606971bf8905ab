import type { StoredCall } from '../../processes/process-store.ts';
import type { Db } from './tables.ts';

/**
 * The calls of run `run` of process `pid` with a position after `after`, by position, at most `limit`
 * (all when absent), decoded from their rows (`calls` table).
 */
export async function readCalls(
  db: Db,
  pid: number,
  run: number,
  after: number,
  limit?: number,
): Promise<StoredCall[]> {
  let query = db
    .selectFrom('calls')
    .select(['body', 'input_hash', 'replay'])
    .where('pid', '=', pid)
    .where('run', '=', run)
    .where('position', '>', after)
    .orderBy('position');
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return rows.map((row) => ({
    ...JSON.parse(row.body),
    inputHash: row.input_hash,
    ...(row.replay !== null && { replay: JSON.parse(row.replay) }),
  }));
}
