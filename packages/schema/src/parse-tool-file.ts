import type { z } from 'zod';
import { SchemaError } from './schema-error.ts';
import { parseSourceDocument, type SourceDocument } from './source-document.ts';
import { type ToolFile, ToolFileSchema } from './tool-file-schema.ts';
import { type ToolsetFile, ToolsetFileSchema } from './toolset-schema.ts';
import { toSchemaIssues } from './zod-issues.ts';

/** A parsed document together with where its nodes are, for later (cross-file) issues. */
export interface ParsedDocument<T> {
  data: T;
  source: SourceDocument;
}

/** A document's text, or the document already parsed from it. */
type Source = string | SourceDocument;

function parseWith<S extends z.ZodType>(
  schema: S,
  text: Source,
  fileName: string,
): ParsedDocument<z.infer<S>> {
  const source = typeof text === 'string' ? parseSourceDocument(text, fileName) : text;
  const result = schema.safeParse(source.value, { reportInput: true });
  if (!result.success) {
    throw new SchemaError('INVALID_TOOL_FILE', toSchemaIssues(result.error.issues, fileName, source));
  }
  return { data: result.data, source };
}

/**
 * Parses one main tool file (JSON or YAML, chosen by `fileName`'s extension, else by content) and
 * applies the schema's defaults. Does not read toolsets or check names across files: see
 * {@link loadToolFile}.
 * @param fileName - Name used in issues and to pick the syntax.
 * @throws {SchemaError} `PARSE_ERROR` (syntax, with line/column) or `INVALID_TOOL_FILE` with every
 * issue of the document.
 */
export function parseToolFile(text: string, fileName: string): ToolFile {
  return parseToolFileDocument(text, fileName).data;
}

/** {@link parseToolFile} keeping the source locations. */
export function parseToolFileDocument(text: Source, fileName: string): ParsedDocument<ToolFile> {
  return parseWith(ToolFileSchema, text, fileName);
}

/**
 * Parses one toolset file (`schemaVersion`, `metadata`, `tools`).
 * @throws {SchemaError} as {@link parseToolFile}.
 */
export function parseToolsetFile(text: string, fileName: string): ToolsetFile {
  return parseToolsetFileDocument(text, fileName).data;
}

/** {@link parseToolsetFile} keeping the source locations. */
export function parseToolsetFileDocument(text: Source, fileName: string): ParsedDocument<ToolsetFile> {
  return parseWith(ToolsetFileSchema, text, fileName);
}

/** Fields only a main tool file may have. */
const MAIN_FILE_FIELDS = ['toolsets', 'mcp_servers', 'libraryDir', 'enableAnyPaths', 'directoryAllowList'];

/**
 * Whether a document given as a main tool file is a toolset file on its own: it has no main-file
 * field, and it is a cached MCP toolset (`expiresAt`) or has `mcp` tools (whose servers only the
 * main file that uses it can declare).
 */
export function isStandaloneToolset(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const document = value as Record<string, unknown>;
  if (MAIN_FILE_FIELDS.some((field) => field in document)) return false;
  if ('expiresAt' in document) return true;
  const tools = Array.isArray(document.tools) ? (document.tools as unknown[]) : [];
  return tools.some(
    (tool) =>
      typeof tool === 'object' &&
      tool !== null &&
      (tool as { execution?: { type?: unknown } }).execution?.type === 'mcp',
  );
}
