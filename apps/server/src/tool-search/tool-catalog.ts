import type { ToolCatalog, ToolDescription, ToolMatch } from '@mci/sandbox';
import MiniSearch from 'minisearch';
import { renderToolDeclaration, type ToolDeclarationSource } from '../tools-dts/sandbox-globals-dts.ts';

/** What the catalog knows of one tool: what `/tools.d.ts` declares, and what search looks at. */
export interface CatalogTool extends ToolDeclarationSource {
  title?: string | undefined;
  tags?: readonly string[] | undefined;
  annotations?: Readonly<Record<string, unknown>> | undefined;
}

/** One indexed document: the text of a tool's fields, by field. */
interface ToolDocument {
  id: number;
  name: string;
  title: string;
  description: string;
  tags: string;
  props: string;
}

const FIELDS = ['name', 'title', 'description', 'tags', 'props'] as const;

// Words are runs of letters and digits (so `get_weather` and `get-weather` are two words), and a
// camelCase word also counts as its parts (`getWeather`: getweather, get, weather).
const WORD = /[\p{L}\p{N}]+/gu;
const CAMEL_BOUNDARY = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})/u;
const tokenize = (text: string): string[] =>
  (text.match(WORD) ?? []).flatMap((word) => {
    const parts = word.split(CAMEL_BOUNDARY);
    return parts.length > 1 ? [word, ...parts] : [word];
  });

// Words too common to tell tools apart; leaving them out also keeps a query in plain English fast
// (each one would match nearly every description: docs/notes/2026-11-28-tool-search.md).
const STOP_WORDS = new Set(
  'a an and are as at be by for from has have in is it its of on or that the their this to with'.split(' '),
);
const processTerm = (term: string): string | null => {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) ? null : lower;
};

/**
 * The catalog of a tool list for `tools.search`, `tools.describe` and MCP `search_tools` /
 * `describe_tool`: a full-text index (MiniSearch, BM25 ranking) over each tool's name, title,
 * description, tags and input property names, built once. A query's words (but common ones such as
 * "the" and "for") are matched as whole words, as prefixes (3 letters and more) and with a typo
 * (5 letters and more); a match in the name counts most. Tools are described with the declaration
 * `/tools.d.ts` gives them.
 */
export function createToolCatalog(tools: readonly CatalogTool[]): ToolCatalog {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const index = new MiniSearch<ToolDocument>({
    fields: [...FIELDS],
    tokenize,
    processTerm,
    searchOptions: {
      boost: { name: 3, title: 2, tags: 1.5 },
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
    },
  });
  index.addAll(
    tools.map((tool, id) => ({
      id,
      name: tool.name,
      title: tool.title ?? '',
      description: tool.description ?? '',
      tags: (tool.tags ?? []).join(' '),
      props: propertyNames(tool.inputSchema).join(' '),
    })),
  );
  return {
    search(query, limit) {
      return index
        .search(query)
        .slice(0, limit)
        .map((hit) => {
          const tool = tools[hit.id as number]!;
          const match: ToolMatch = { name: tool.name, score: Math.round(hit.score * 1000) / 1000 };
          if (tool.description !== undefined) match.description = tool.description;
          return match;
        });
    },
    describe(name) {
      const tool = byName.get(name);
      if (!tool) return undefined;
      const description: ToolDescription = {
        name: tool.name,
        inputSchema: (tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
        declaration: renderToolDeclaration(tool),
      };
      if (tool.description !== undefined) description.description = tool.description;
      if (tool.annotations !== undefined) description.annotations = { ...tool.annotations };
      return description;
    },
  };
}

/** The names of the top-level properties of an input schema. */
function propertyNames(schema: ToolDeclarationSource['inputSchema']): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const properties = schema.properties;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}
