/**
 * What went wrong while reading tool files:
 * - `PARSE_ERROR`: the text is not valid JSON/YAML (or is empty);
 * - `INVALID_TOOL_FILE`: the document does not match the MCI schema (fields, types, rules);
 * - `FILE_NOT_FOUND`: the main tool file cannot be read;
 * - `TOOLSET_NOT_FOUND`: a toolset is in none of the places it is looked for, or is an empty directory;
 * - `DUPLICATE_TOOL`: two enabled tools share a name;
 * - `MCP_SERVER_FAILED`: the MCP resolver threw or returned invalid tools for a server.
 */
export type SchemaErrorCode =
  | 'PARSE_ERROR'
  | 'INVALID_TOOL_FILE'
  | 'FILE_NOT_FOUND'
  | 'TOOLSET_NOT_FOUND'
  | 'DUPLICATE_TOOL'
  | 'MCP_SERVER_FAILED';

/** One problem found in a tool file. */
export interface SchemaIssue {
  /** Absolute path (or the name given to {@link parseToolFile}) of the file the problem is in. */
  file: string;
  /** JSON path of the bad field, like `tools[2].execution.type`; `''` for the whole document. */
  path: string;
  message: string;
  /** 1-based line of the field (or of the syntax error), when known. */
  line?: number;
  /** 1-based column, when known. */
  column?: number;
  /** Kind of problem; the error's `code` when all issues share it. */
  code?: SchemaErrorCode;
}

/** Formats an issue as `file:line:column path: message` (parts that are unknown are left out). */
export function formatSchemaIssue(issue: SchemaIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}:${issue.column ?? 1}`;
  return issue.path === '' ? `${where}: ${issue.message}` : `${where} ${issue.path}: ${issue.message}`;
}

/**
 * The error of the tool-file boundary: every issue found (not only the first), each naming its file,
 * JSON path and, where known, line and column. `message` lists them all, one per line.
 */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
  readonly code: SchemaErrorCode;
  readonly issues: SchemaIssue[];

  constructor(code: SchemaErrorCode, issues: SchemaIssue[], options?: { cause?: unknown }) {
    const noun = issues.length === 1 ? 'problem' : 'problems';
    super(`${issues.length} ${noun} in tool files:\n${issues.map(formatSchemaIssue).join('\n')}`, options);
    this.code = code;
    this.issues = issues.map((issue) => ({ ...issue, code: issue.code ?? code }));
  }

  /** One error out of issues of several kinds; its code is theirs when they agree, else `INVALID_TOOL_FILE`. */
  static fromIssues(issues: SchemaIssue[]): SchemaError {
    const codes = new Set(issues.map((issue) => issue.code ?? 'INVALID_TOOL_FILE'));
    const [only] = codes;
    return new SchemaError(codes.size === 1 && only ? only : 'INVALID_TOOL_FILE', issues);
  }
}

