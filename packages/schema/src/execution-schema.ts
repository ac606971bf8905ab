import { z } from 'zod';
import { AuthSchema } from './auth-schema.ts';

/** Default timeout of http and cli executions, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

const timeoutMs = z.int().min(0).default(DEFAULT_TIMEOUT_MS);

/** HTTP methods an http execution may use. */
export const HttpMethodSchema = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * Request body of an http execution: `json` (any JSON value, sent as `application/json`), `form`
 * (an object of fields, sent as `application/x-www-form-urlencoded`) or `raw` (a string sent as is).
 * Strings inside are templated at run time; `{!!path!!}` inserts a raw JSON value.
 */
export const HttpBodySchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('json'), content: z.json() }),
  z.strictObject({ type: z.literal('form'), content: z.record(z.string(), z.json()) }),
  z.strictObject({ type: z.literal('raw'), content: z.string() }),
]);

/**
 * Retry policy of an http execution. `attempts` counts every try (1 = no retry); `backoff_ms` is the
 * delay before a retry, in milliseconds.
 */
export const RetriesSchema = z.strictObject({
  /** @default 1 */
  attempts: z.int().min(1).default(1),
  /** @default 500 */
  backoff_ms: z.int().min(0).default(500),
});

/**
 * An HTTP request. `url`, `headers`, `params`, `body` and auth values are templates.
 * @see MCI schema reference, "HTTP Execution"
 */
export const HttpExecutionSchema = z.strictObject({
  type: z.literal('http'),
  /** @default 'GET' */
  method: HttpMethodSchema.default('GET'),
  url: z.string().min(1),
  headers: z.record(z.string(), z.json()).optional(),
  /** Query parameters, appended to `url`. */
  params: z.record(z.string(), z.json()).optional(),
  auth: AuthSchema.optional(),
  body: HttpBodySchema.optional(),
  /** Timeout per attempt, in milliseconds. @default 30000 */
  timeout_ms: timeoutMs,
  /** @default { attempts: 1, backoff_ms: 500 } */
  retries: RetriesSchema.default({ attempts: 1, backoff_ms: 500 }),
});

/**
 * A CLI flag mapped from an input property: `boolean` adds the flag when the value is truthy,
 * `value` adds the flag followed by the value.
 */
export const CliFlagSchema = z.strictObject({
  /** Dotted path of the value, e.g. `props.ignore_case`. */
  from: z.string().min(1),
  type: z.enum(['boolean', 'value']),
});

/**
 * A command run without a shell: `command` with `args` (templates), then the `flags` whose
 * values are present, in `cwd` (a template; relative paths resolve against the tool file's directory).
 * `endOfOptions` and `enableOptionLikeArgs` are this project's additions (guards against props that
 * a program would read as options).
 * @see MCI schema reference, "CLI Execution"
 */
export const CliExecutionSchema = z.strictObject({
  type: z.literal('cli'),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** Flag name (e.g. `-i`, `--size`) to its source. */
  flags: z.record(z.string().min(1), CliFlagSchema).optional(),
  /**
   * Puts the flags first, then `--`, then `args`: the program reads every arg as an operand, even
   * one that starts with `-`. @default false
   */
  endOfOptions: z.boolean().optional(),
  /**
   * Lets a templated arg start with `-` (refused by default, because the program would read it as an
   * option; write option values as `flags` or `--name={{props.x}}` instead). @default false
   */
  enableOptionLikeArgs: z.boolean().optional(),
  cwd: z.string().optional(),
  /** @default 30000 */
  timeout_ms: timeoutMs,
});

/**
 * Reads a file (`path` is a template, relative to the tool file's directory) and, when
 * `enableTemplating` is true, renders its content as a template.
 * @see MCI schema reference, "File Execution"
 */
export const FileExecutionSchema = z.strictObject({
  type: z.literal('file'),
  path: z.string().min(1),
  /** @default true */
  enableTemplating: z.boolean().default(true),
});

/**
 * Returns `text` rendered as a template.
 * @see MCI schema reference, "Text Execution"
 */
export const TextExecutionSchema = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
});

/**
 * Calls tool `toolName` on the MCP server `serverName` of the main file's `mcp_servers`
 * (the execution of tools that come from MCP servers).
 */
export const McpExecutionSchema = z.strictObject({
  type: z.literal('mcp'),
  serverName: z.string().min(1),
  toolName: z.string().min(1),
});

/**
 * How a tool runs, discriminated on `type`: `http`, `cli`, `file`, `text`, `mcp`.
 * @see MCI schema reference, "Execution Types"
 */
export const ExecutionSchema = z.discriminatedUnion('type', [
  HttpExecutionSchema,
  CliExecutionSchema,
  FileExecutionSchema,
  TextExecutionSchema,
  McpExecutionSchema,
]);

export type HttpMethod = z.infer<typeof HttpMethodSchema>;
export type HttpBody = z.infer<typeof HttpBodySchema>;
export type Retries = z.infer<typeof RetriesSchema>;
export type HttpExecution = z.infer<typeof HttpExecutionSchema>;
export type CliFlag = z.infer<typeof CliFlagSchema>;
export type CliExecution = z.infer<typeof CliExecutionSchema>;
export type FileExecution = z.infer<typeof FileExecutionSchema>;
export type TextExecution = z.infer<typeof TextExecutionSchema>;
export type McpExecution = z.infer<typeof McpExecutionSchema>;
/** How a tool runs (defaults applied). */
export type Execution = z.infer<typeof ExecutionSchema>;
/** The `type` of an execution. */
export type ExecutionType = Execution['type'];
