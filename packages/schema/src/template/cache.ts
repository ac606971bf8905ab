import { LRUCache } from 'lru-cache';
import type { TemplateNode } from './ast.ts';
import { parse } from './parser.ts';

/** How many parsed templates the cache keeps; the least recently used is dropped first. */
export const TEMPLATE_CACHE_SIZE = 1000;
/** Most source characters the cache holds in all (large file templates would otherwise pile up). */
const MAX_CACHED_CHARS = 16 * 1024 * 1024;

const cache = new LRUCache<string, readonly TemplateNode[]>({
  max: TEMPLATE_CACHE_SIZE,
  maxSize: MAX_CACHED_CHARS,
  // A template over a quarter of the budget is parsed each time rather than kept.
  maxEntrySize: MAX_CACHED_CHARS / 4,
  sizeCalculation: (_nodes, source) => Math.max(1, source.length),
});

function freeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) freeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Parses a template into its tree (frozen: share it, do not change it). Results are cached by
 * source string in a bounded LRU of {@link TEMPLATE_CACHE_SIZE} entries (and 16 M source characters;
 * a template over 4 M characters is not cached), so a tool's templates are parsed once however often
 * they render.
 *
 * @throws {TemplateError} `TEMPLATE_SYNTAX` with the line of the fault, for an unclosed placeholder
 * or block, a malformed directive, or an invalid expression. Failures are not cached.
 */
export function parseTemplate(source: string): readonly TemplateNode[] {
  let nodes = cache.get(source);
  if (!nodes) {
    nodes = freeze(parse(source));
    cache.set(source, nodes);
  }
  return nodes;
}

/** Number of templates in the parse cache (for tests and diagnostics). */
export function templateCacheSize(): number {
  return cache.size;
}
