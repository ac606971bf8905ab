import type { TemplateNode } from './ast.ts';
import { parse } from './parser.ts';

/** How many parsed templates the cache keeps; the least recently used is dropped first. */
export const TEMPLATE_CACHE_SIZE = 1000;

// A Map iterates in insertion order, so re-inserting on a hit keeps the oldest entry first.
const cache = new Map<string, readonly TemplateNode[]>();

function freeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) freeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Parses a template into its tree (frozen: share it, do not change it). Results are cached by
 * source string in a bounded LRU of {@link TEMPLATE_CACHE_SIZE} entries, so a tool's templates are
 * parsed once however often they render.
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
  cache.set(source, nodes);
  if (cache.size > TEMPLATE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return nodes;
}

/** Number of templates in the parse cache (for tests and diagnostics). */
export function templateCacheSize(): number {
  return cache.size;
}
