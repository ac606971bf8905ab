import { formatJsonPath, issueParts, type ZodIssue } from '@mci/protocol';
import type { SchemaIssue } from './schema-error.ts';
import type { SourceDocument } from './source-document.ts';

/**
 * Turns zod issues (parsed with `reportInput: true`) into schema issues with a JSON path, a message
 * a person can act on, and the line/column of the field in `source`.
 */
export function toSchemaIssues(
  issues: readonly ZodIssue[],
  file: string,
  source: SourceDocument,
): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const { path, message } of issues.flatMap(issueParts)) {
    out.push({ file, path: formatJsonPath(path), message, ...source.locate(path) });
  }
  // zod reports in schema order; a reader goes down the file.
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

