import type { CallPage, CallRecord } from '@mci/protocol';
import { pageBounds, toPage } from '../paging/cursor.ts';
import type { CallPageRequest } from '../processes/process-manager-types.ts';
import type { StoredCall } from '../processes/process-store.ts';

/**
 * The position after which a page of a run's calls starts (-1: the first page) and its size. A run's
 * calls are a log: they page by position ascending, oldest first, the one list that does.
 * @throws ServerError `VALIDATION` (`path` `cursor` or `limit`) for a cursor this server does not
 *   give or a limit out of 1 to 100.
 */
export function callPageBounds(request: CallPageRequest): { after: number; limit: number } {
  const { limit, after } = pageBounds(request, ['number']);
  return { after: after === undefined ? -1 : (after[0] as number), limit };
}

/**
 * The page of run `run` of process `pid` made of `calls`, read with `limit + 1` rows: when the extra
 * row is there, the page says where the next one starts.
 */
export function callPage(pid: number, run: number, calls: StoredCall[], limit: number): CallPage {
  const page = toPage(calls, limit, (call) => [call.position]);
  const items: CallRecord[] = page.items.map(({ inputHash: _hash, replay: _whole, ...call }) => ({
    pid,
    run,
    ...call,
  }));
  return page.nextCursor === undefined ? { items } : { items, nextCursor: page.nextCursor };
}
