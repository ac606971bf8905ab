import { z } from 'zod';

/** Items per page when a list request gives no `limit`. */
export const DEFAULT_PAGE_LIMIT = 50;
/** The most items one page holds. */
export const MAX_PAGE_LIMIT = 100;

/**
 * The paging fields of every list request (HTTP query, WebSocket message, MCP list): `limit` items
 * (1 to 100, default 50) after `cursor`, the opaque `nextCursor` of the page before.
 */
export const PageRequestSchema = z.object({
  limit: z.number().int().min(1).max(MAX_PAGE_LIMIT).optional(),
  cursor: z.string().min(1).max(1024).optional(),
});
/** @see PageRequestSchema */
export type PageRequest = z.infer<typeof PageRequestSchema>;

/**
 * The HTTP query form of {@link PageRequestSchema}: `limit` arrives as text.
 */
export const PageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).optional(),
  cursor: z.string().min(1).max(1024).optional(),
});

/**
 * One page of a list, newest first unless the list says otherwise: `nextCursor` (absent on the last
 * page) asks for the next.
 */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().optional() });
}

/** One page of a list: `nextCursor` (absent on the last page) asks for the next. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
