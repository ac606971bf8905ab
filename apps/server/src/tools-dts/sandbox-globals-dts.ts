import { SKILLS_DTS } from '../skills/skill-declarations.ts';
import { docComment, type JsonSchema, propertyKey, schemaToType } from './json-schema-to-ts.ts';

/** What the declaration generator needs to know about one tool. */
export interface ToolDeclarationSource {
  name: string;
  description?: string;
  inputSchema?: JsonSchema;
  /** The secrets the tool uses (their names, and whether the server has a value). */
  secrets?: ReadonlyArray<{ name: string; set: boolean }>;
}

const PRELUDE = `// Globals available to code run by MCI Server (an async function body: top-level await and
// return work; import/require do not). Generated from the server's tool file.

/** Content items of a tool result (the MCP content union); \`text\` is undefined on the others. */
type ToolContent = { text?: string } & (
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
);

/**
 * The MCI execution result a successful tool call resolves to. A failed call rejects with an Error
 * named ToolError ("Tool <name> failed: <error>"): catch it to handle the failure.
 */
interface ToolResult {
  /** false: a failed call rejects instead of resolving. */
  isError: boolean;
  content: ToolContent[];
  /** The error message when isError is true. */
  error?: string;
  metadata?: Record<string, unknown>;
  /** Parsed JSON for JSON responses. */
  structuredContent?: unknown;
}

/**
 * Records one output value of the program (copied with structured-clone rules). A promise is awaited
 * first. A non-undefined return value of the program is recorded as a final output.
 */
declare const output: {
  (value: unknown): void;
  /**
   * Outputs a picture: { type: 'image', mimeType, data } with data in base64, shown by clients and
   * sent to models that see images. data: the bytes, or base64 text; mimeType: image/png, image/jpeg...
   * Counts against the run's output limit; rejects with the reason (bad type, too big), and an
   * unhandled rejection fails the run.
   */
  image(data: Uint8Array | ArrayBuffer | string, mimeType: string): Promise<void>;
  /**
   * Stores a file with the run (served at GET /processes/:pid/runs/:n/files/:name) and outputs
   * { type: 'file', name, mimeType, size, uri }. name: no "/", "\\" or "..", at most 200 characters,
   * one file per name in a run. data: text (UTF-8) or bytes. mimeType: type/subtype, by default
   * text/plain for text and application/octet-stream for bytes. Counts against the output limit.
   */
  file(name: string, data: string | Uint8Array | ArrayBuffer, mimeType?: string): Promise<void>;
};

/**
 * The durable key-value state of the run's session (its own state without one): kept across runs and
 * restarts. Values are structured-clone data (Map, Date, bigint and cycles survive). A write is
 * durable and seen by other runs once set resolves. Keys: 1-256 characters.
 */
declare const state: {
  /** The value of key, or undefined. With { withVersion: true }: { value, version } (version 0: absent). */
  get(key: string): Promise<any>;
  get(key: string, options: { withVersion: true }): Promise<{ value: any; version: number }>;
  /**
   * Writes key. ttlMs: expire after that many ms. ifVersion: write only if the key is at that version
   * (from get with withVersion; 0 for absent), else reject with an error whose code is VERSION_CONFLICT.
   * Rejects with code LIMIT_EXCEEDED past the size limits.
   */
  set(key: string, value: unknown, options?: { ttlMs?: number; ifVersion?: number }): Promise<{ version: number }>;
  /** Deletes key; true when it was there. */
  delete(key: string): Promise<boolean>;
  /** The keys that start with prefix, in order. */
  keys(prefix?: string): Promise<string[]>;
};

/** log/info/debug go to stdout, warn/error to stderr (formatted like Node's console). */
declare const console: {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
};

/** The response of fetch (a subset of the standard Response). */
interface FetchResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly statusText: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null; has(name: string): boolean };
  text(): Promise<string>;
  json(): Promise<any>;
}

/** A standard fetch subset; hosts are limited by the server's egress policy. */
declare function fetch(
  url: string | { readonly href: string },
  init?: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<FetchResponse>;
`;

/** The declarations of what `tools.search` and `tools.describe` resolve to. */
const FINDER_TYPES = `
/** A tool found by tools.search; a higher score is a better match. */
interface ToolMatch {
  name: string;
  description?: string;
  score: number;
}

/** What tools.describe tells about a tool. */
interface ToolDescription {
  name: string;
  description?: string;
  /** The JSON Schema of the tool's props. */
  inputSchema: Record<string, unknown>;
  /** MCP annotations: readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title. */
  annotations?: Record<string, unknown>;
  /** The TypeScript declaration of the tool, as in \`tools\`. */
  declaration: string;
}
`;

/** The built-in members of `tools`, by name (a tool of the same name takes the name instead). */
const FINDERS: Record<string, string> = {
  search: `  /**
   * Finds tools by what they do: ranked full-text search over their names, descriptions, tags and
   * input property names, best match first. limit: 1 to 100, default 10.
   */
  search(query: string, options?: { limit?: number }): Promise<ToolMatch[]>;
`,
  describe: `  /** The description, input schema, annotations and declaration of one tool; rejects for an unknown name. */
  describe(name: string): Promise<ToolDescription>;
`,
};

/**
 * Renders the TypeScript declarations of the sandbox globals (`output`, `console`, `fetch`, and
 * `tools` with one typed async function per tool, its props typed from the tool's `inputSchema`,
 * and `tools.search` / `tools.describe` unless a tool has that name, and `skills` with `skills.save`;
 * a principal's own skills are declared apart, see `renderSkillDeclarations`): what a chat client puts in a
 * model's prompt. Served as `GET /tools.d.ts`.
 */
export function renderSandboxGlobals(tools: readonly ToolDeclarationSource[]): string {
  const names = new Set(tools.map((tool) => tool.name));
  let body = '';
  for (const [name, declaration] of Object.entries(FINDERS)) if (!names.has(name)) body += declaration;
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    body += renderToolDeclaration(tool, '  ');
  }
  const toolsDecl = `/** The tools of this server, one async function each. */\ndeclare const tools: {\n${body}};\n`;
  return `${PRELUDE}${FINDER_TYPES}\n${toolsDecl}${SKILLS_DTS}`;
}

/**
 * The declaration of one tool as a member of `tools` (its doc comment, then
 * `name(props: {...}): Promise<ToolResult>;`), each line starting with `indent`.
 */
export function renderToolDeclaration(tool: ToolDeclarationSource, indent = ''): string {
  const schema = tool.inputSchema ?? { type: 'object' };
  const propsType = schemaToType(schema, indent);
  const optional = !hasRequired(schema);
  const lines = tool.description ? [tool.description] : [];
  if (tool.secrets?.length) lines.push(secretsLine(tool.secrets));
  return `${docComment(lines, indent)}${indent}${propertyKey(tool.name)}(props${optional ? '?' : ''}: ${propsType}): Promise<ToolResult>;\n`;
}

/** The doc line naming a tool's secrets: the host adds them, the program never sees them. */
function secretsLine(secrets: ReadonlyArray<{ name: string; set: boolean }>): string {
  const names = secrets.map(({ name, set }) => (set ? name : `${name} (not set)`));
  return `Uses the secrets ${names.join(', ')}, added by the host (never visible to this code).`;
}

function hasRequired(schema: JsonSchema): boolean {
  return typeof schema === 'object' && Array.isArray(schema.required) && schema.required.length > 0;
}
