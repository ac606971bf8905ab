import type { SchemaErrorCode, SchemaIssue } from './schema-error.ts';
import type { SourceDocument } from './source-document.ts';
import type { ResolvedTool } from './tool-collection.ts';

/** A tool with where it is written, for cross-file issues. */
export interface Candidate {
  tool: ResolvedTool;
  file: string;
  path: (string | number)[];
  source: SourceDocument | undefined;
}

/** Makes an issue located in the main file. */
export type IssueAt = (code: SchemaErrorCode, path: (string | number)[], message: string) => SchemaIssue;
