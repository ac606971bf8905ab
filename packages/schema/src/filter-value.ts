import { z } from 'zod';

/**
 * Kinds of schema-level filter of a toolset or MCP server: `only` / `except` take tool names,
 * `tags` / `withoutTags` take tags.
 * @see MCI schema reference, "Schema-Level Filters"
 */
export const FilterTypeSchema = z.enum(['only', 'except', 'tags', 'withoutTags']);

/** A kind of schema-level filter. */
export type FilterType = z.infer<typeof FilterTypeSchema>;

/**
 * Splits a `filterValue` into its items: comma-separated, each item trimmed, empty items dropped.
 * `"a, b,,c "` gives `['a', 'b', 'c']`.
 */
export function parseFilterValue(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/**
 * The `filter` / `filterValue` pair shared by toolset references and MCP server configs, with the
 * rule that a filter needs a usable value and a value needs a filter.
 */
export const filterFields = {
  filter: FilterTypeSchema.optional(),
  filterValue: z.string().optional(),
};

/** Adds an issue when `filter` and `filterValue` do not go together. */
export function checkFilterPair(
  value: { filter?: FilterType | undefined; filterValue?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.filter !== undefined && parseFilterValue(value.filterValue ?? '').length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['filterValue'],
      message: `filter "${value.filter}" needs a filterValue: a comma-separated list of ${
        value.filter === 'only' || value.filter === 'except' ? 'tool names' : 'tags'
      }`,
    });
  }
  if (value.filter === undefined && value.filterValue !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['filter'],
      message: 'filterValue is set but filter is missing: add filter (only, except, tags or withoutTags)',
    });
  }
}
