import { describe, expect, it } from 'vitest';
import { encodeCursor, pageBounds, toPage } from './cursor.ts';

describe('paging cursors', () => {
  it('continues after the key of the last item kept', () => {
    const rows = [{ pid: 5 }, { pid: 4 }, { pid: 3 }];
    const page = toPage(rows, 2, (row) => [row.pid]);
    expect(page.items).toEqual([{ pid: 5 }, { pid: 4 }]);
    expect(pageBounds({ cursor: page.nextCursor! }, ['number'])).toEqual({ limit: 50, after: [4] });
    expect(toPage(rows, 3, (row) => [row.pid])).toEqual({ items: rows });
  });

  it('refuses a cursor of another shape and a limit out of range, naming the field', () => {
    expect(() => pageBounds({ cursor: 'nonsense' }, ['number'])).toThrow(
      expect.objectContaining({ code: 'VALIDATION', path: 'cursor' }),
    );
    expect(() => pageBounds({ cursor: encodeCursor(['a']) }, ['number'])).toThrow(
      expect.objectContaining({ path: 'cursor' }),
    );
    expect(() => pageBounds({ limit: 101 }, ['number'])).toThrow(expect.objectContaining({ path: 'limit' }));
  });
});
