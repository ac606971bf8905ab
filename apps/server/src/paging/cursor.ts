import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type Page, type PageRequest } from '@mci/protocol';
import { ServerError } from '../processes/server-error.ts';

/** The sort key of the last item of a page: what a keyset query continues after. */
export type CursorKey = readonly (string | number)[];

/**
 * Encodes a page's last sort key as an opaque cursor (base64url of its JSON), so clients cannot
 * come to depend on its shape.
 */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/**
 * The bounds of the page `request` asks for: its `limit` (default 50, 1 to 100) and, when it gives a
 * cursor, the sort key to continue after, checked against `shape` (one `'string'` or `'number'` per
 * element of the key).
 * @throws ServerError `VALIDATION` (`path` `limit` or `cursor`) for a limit out of range or a cursor
 *   this list does not give.
 */
export function pageBounds(
  request: PageRequest,
  shape: readonly ('string' | 'number')[],
): { limit: number; after?: CursorKey } {
  const limit = request.limit ?? DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    throw new ServerError('VALIDATION', `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`, {
      path: 'limit',
    });
  if (request.cursor === undefined) return { limit };
  const key = decode(request.cursor);
  if (!key || key.length !== shape.length || key.some((part, i) => typeof part !== shape[i]))
    throw new ServerError('VALIDATION', 'cursor is not one this list gave (use the nextCursor of a page)', {
      path: 'cursor',
    });
  return { limit, after: key as CursorKey };
}

/**
 * The page made of `rows`, read with `limit + 1` rows: when the extra row is there, `nextCursor`
 * continues after the last item kept (its key by `keyOf`).
 */
export function toPage<T>(rows: readonly T[], limit: number, keyOf: (row: T) => CursorKey): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return rows.length > limit && last !== undefined
    ? { items, nextCursor: encodeCursor(keyOf(last)) }
    : { items };
}

function decode(cursor: string): unknown[] | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
