import { extname } from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { SchemaError } from './schema-error.ts';

/** A parsed JSON or YAML document that can tell where a JSON path sits in its text. */
export interface SourceDocument {
  value: unknown;
  /** 1-based line and column of the node at `path`, or of its nearest ancestor that exists. */
  locate(path: readonly PropertyKey[]): { line: number; column: number } | undefined;
}

/** The syntax of a file: by extension, else by its first character (`{`/`[` means JSON). */
export function detectFormat(fileName: string, text: string): 'json' | 'yaml' {
  const ext = extname(fileName).toLowerCase();
  if (ext === '.json') return 'json';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  return /^\s*[[{]/.test(text) ? 'json' : 'yaml';
}

/**
 * Parses JSON or YAML text. JSON values come from `JSON.parse` (so JSON and YAML files give
 * identical results); the `yaml` package's document and line counter locate nodes for both.
 * @throws {SchemaError} `PARSE_ERROR` with line and column for syntax errors, duplicate keys or an
 * empty document.
 */
export function parseSourceDocument(source: string, fileName: string): SourceDocument {
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const text = source.startsWith('\uFEFF') ? source.slice(1) : source;
  const format = detectFormat(fileName, text);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, keepSourceTokens: false });
  let value: unknown;
  if (format === 'json') {
    value = parseJson(text, fileName);
    // JSON.parse keeps the last of duplicate keys silently; YAML's parser reports them.
    const duplicate = doc.errors.find((error) => error.code === 'DUPLICATE_KEY');
    if (duplicate)
      throw parseError(fileName, 'duplicate key in object', lineCounter.linePos(duplicate.pos[0]));
  } else {
    const [error] = doc.errors;
    if (error) throw parseError(fileName, firstLine(error.message), lineCounter.linePos(error.pos[0]));
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (cause) {
      // The yaml package throws when aliases expand past maxAliasCount (a "billion laughs" document).
      const message = `cannot expand the YAML document: ${cause instanceof Error ? cause.message : String(cause)}`;
      throw new SchemaError('PARSE_ERROR', [{ file: fileName, path: '', message }], { cause });
    }
  }
  if (value === null || value === undefined) {
    throw new SchemaError('PARSE_ERROR', [{ file: fileName, path: '', message: 'the file is empty' }]);
  }
  const usable = format === 'yaml' || doc.errors.length === 0;
  return {
    value,
    locate: (path) => {
      if (!usable) return undefined;
      const offset = offsetOf(doc.contents, path);
      if (offset === undefined) return undefined;
      const { line, col } = lineCounter.linePos(offset);
      return { line, column: col };
    },
  };
}

function parseJson(text: string, fileName: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    const { description, position } = describeJsonError(message, text);
    const where = position === undefined ? undefined : positionToLineCol(text, position);
    throw parseError(fileName, `invalid JSON: ${description}`, where, cause);
  }
}

/** V8 keeps the context of a token within this many characters on each side. */
const V8_CONTEXT_CHARACTERS = 10;

/**
 * The message and offset of a V8 JSON.parse error. Most messages end "in JSON at position N (line L
 * column C)"; "Unexpected token" ones quote the source around the token instead, from which the
 * offset is recovered.
 * @see https://github.com/v8/v8/blob/main/src/json/json-parser.cc (ReportUnexpectedToken)
 */
function describeJsonError(message: string, text: string): { description: string; position?: number } {
  const at = /^(.*?),? in JSON at position (\d+)/s.exec(message);
  if (at) return { description: at[1] ?? message, position: Number(at[2]) };
  if (/end of JSON input/.test(message)) return { description: message, position: text.length };
  const token = /^Unexpected token '(.+?)', (\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/.exec(message);
  if (!token) return { description: message };
  const [, char = '', leading, context = '', trailing] = token;
  const description = `Unexpected token '${char}'`;
  let position: number;
  if (leading) position = text.indexOf(context) + V8_CONTEXT_CHARACTERS;
  else if (trailing) position = context.length - V8_CONTEXT_CHARACTERS;
  else position = text.indexOf(char); // the whole (short) source is quoted
  return position >= 0 && position < text.length ? { description, position } : { description };
}

function positionToLineCol(text: string, position: number): { line: number; col: number } {
  const before = text.slice(0, position).split('\n');
  return { line: before.length, col: (before.at(-1)?.length ?? 0) + 1 };
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
}

function parseError(
  file: string,
  message: string,
  where: { line: number; col: number } | undefined,
  cause?: unknown,
): SchemaError {
  const location = where ? { line: where.line, column: where.col } : {};
  return new SchemaError('PARSE_ERROR', [{ file, path: '', message, ...location }], { cause });
}

/** Start offset of the node at `path`; a missing segment stops at the deepest node found. */
function offsetOf(root: unknown, path: readonly PropertyKey[]): number | undefined {
  let node = root as Node | null | undefined;
  let offset = node?.range?.[0];
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (!pair) break;
      const key = pair.key as Node | null;
      const value = pair.value as Node | null;
      // Point at the key: the line a reader looks for, and where an unknown field is written.
      offset = key?.range?.[0] ?? value?.range?.[0] ?? offset;
      node = value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}
