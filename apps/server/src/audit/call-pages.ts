import type { CallPage, CallRecord } from '@mci/protocol';
import type { CallPageRequest } from '../processes/process-manager-types.ts';
import type { StoredCall } from '../processes/process-store.ts';
import { ServerError } from '../processes/server-error.ts';

/** Calls per page of a run's calls when the request gives no `limit`. */
export const DEFAULT_CALL_PAGE = 50;
/** The most calls one page holds. */
export const MAX_CALL_PAGE = 100;

/** A cursor is the position of the last call of the page before, in decimal. */
const CURSOR = /^(0|[1-9][0-9]{0,14})$/;

/**
 * The position after which a page starts and its size.
 * @throws ServerError `VALIDATION` for a cursor this server does not give or a limit out of 1 to 100.
 */
export function callPageBounds(request: CallPageRequest): { after: number; limit: number } {
  const limit = request.limit ?? DEFAULT_CALL_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CALL_PAGE)
    throw new ServerError('VALIDATION', `limit must be an integer from 1 to ${MAX_CALL_PAGE}`, {
      path: 'limit',
    });
  if (request.cursor === undefined) return { after: -1, limit };
  if (!CURSOR.test(request.cursor))
    throw new ServerError('VALIDATION', 'cursor is not one this server gave (use the nextCursor of a page)', {
      path: 'cursor',
    });
  return { after: Number(request.cursor), limit };
}

/**
 * The page of run `run` of process `pid` made of `calls`, read with `limit + 1` rows: when the extra
 * row is there, the page says where the next one starts.
 */
export function callPage(pid: number, run: number, calls: StoredCall[], limit: number): CallPage {
  const items: CallRecord[] = calls
    .slice(0, limit)
    .map(({ inputHash: _hash, replay: _whole, ...call }) => ({ pid, run, ...call }));
  const last = items.at(-1);
  return { items, ...(calls.length > limit && last && { nextCursor: String(last.position) }) };
}
