import type { TemplateNode } from './ast.ts';
import { parse } from './parser.ts';

/** How many parsed templates the cache keeps; the least recently used is dropped first. */
export const TEMPLATE_CACHE_SIZE = 1000;
/** Most source characters the cache holds in all (large file templates would otherwise pile up). */
const MAX_CACHED_CHARS = 16 * 1024 * 1024;

// A Map iterates in insertion order, so re-inserting on a hit keeps the oldest entry first.
const cache = new Map<string, readonly TemplateNode[]>();
let cachedChars = 0;

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
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const nodes = freeze(parse(source));
  if (source.length > MAX_CACHED_CHARS / 4) return nodes; // too big to keep: parse it each time
  cache.set(source, nodes);
  cachedChars += source.length;
  while (cache.size > TEMPLATE_CACHE_SIZE || cachedChars > MAX_CACHED_CHARS) {
    const oldest = cache.keys().next().value!;
    cache.delete(oldest);
    cachedChars -= oldest.length;
  }
  return nodes;
}

/** Number of templates in the parse cache (for tests and diagnostics). */
export function templateCacheSize(): number {
  return cache.size;
}
