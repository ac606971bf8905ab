/** How many matches `tools.search` returns when no `limit` is given. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** The largest `limit` of `tools.search`. */
export const MAX_SEARCH_LIMIT = 100;
/** The longest query of `tools.search`, in characters. */
export const MAX_SEARCH_QUERY_LENGTH = 1000;

/** One tool found by `tools.search`: best matches first, `score` higher for a better match. */
export interface ToolMatch {
  name: string;
  description?: string;
  score: number;
}

/** What `tools.describe(name)` tells about one tool. */
export interface ToolDescription {
  name: string;
  description?: string;
  /** The tool's JSON Schema for `props` (`{ type: 'object' }` when the tool file gives none). */
  inputSchema: Record<string, unknown>;
  /** The MCP annotations of the tool file (`readOnlyHint`, `destructiveHint`, ...). */
  annotations?: Record<string, unknown>;
  /** The TypeScript declaration of the tool, as `/tools.d.ts` declares it inside `tools`. */
  declaration: string;
}

/**
 * Finds and describes the tools of a {@link ToolHost} for `tools.search` and `tools.describe`. It
 * covers the tools the host lists; the sandbox also drops any answer about a tool the host does not
 * list, so a catalog over a larger set never shows a run more than it may call.
 */
export interface ToolCatalog {
  /** The tools best matching `query` (already checked by {@link searchArguments}), at most `limit`. */
  search(query: string, limit: number): ToolMatch[];
  /** The tool named `name`, or undefined when there is none. */
  describe(name: string): ToolDescription | undefined;
}

/**
 * Checks the arguments of a tool search (`tools.search(query, { limit })`, MCP `search_tools`) and
 * applies the default limit.
 * @throws TypeError when `query` is not a string, is blank or longer than
 * {@link MAX_SEARCH_QUERY_LENGTH}, or `options` is not an object; RangeError when `limit` is not an
 * integer from 1 to {@link MAX_SEARCH_LIMIT}.
 */
export function searchArguments(query: unknown, options: unknown): { query: string; limit: number } {
  if (typeof query !== 'string') throw new TypeError(`query must be a string, not ${typeName(query)}`);
  if (query.trim() === '') throw new TypeError('query must not be empty');
  if (query.length > MAX_SEARCH_QUERY_LENGTH)
    throw new TypeError(`query must be at most ${MAX_SEARCH_QUERY_LENGTH} characters long`);
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError(`options must be an object like { limit: 5 }, not ${typeName(options)}`);
  const limit = (options as { limit?: unknown } | undefined)?.limit;
  if (limit === undefined) return { query, limit: DEFAULT_SEARCH_LIMIT };
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_SEARCH_LIMIT)
    throw new RangeError(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, not ${String(limit)}`);
  return { query, limit: limit as number };
}

/**
 * The message for a tool name nobody has, with the closest of the names `visible` allows that
 * `catalog` finds: `No tool is named "wether". Did you mean "weather"?`.
 */
export function unknownToolMessage(
  catalog: ToolCatalog,
  name: string,
  visible: (name: string) => boolean = () => true,
): string {
  const close = name.trim() === '' ? [] : catalog.search(name.slice(0, MAX_SEARCH_QUERY_LENGTH), 3);
  const names = close.map((match) => match.name).filter(visible);
  const hint = names.length > 0 ? ` Did you mean ${names.map((n) => JSON.stringify(n)).join(', ')}?` : '';
  return `No tool is named ${JSON.stringify(name)}.${hint}`;
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}
