import { z } from 'zod';
import { checkFilterPair, filterFields } from './filter-value.ts';

/**
 * A key of `mcp_servers`: letters, digits, `_`, `-`, `.` (not only dots). The name is the toolset
 * name of the server's tools and names its cache file, so it may not hold path separators.
 */
export const McpServerNameSchema = z
  .string()
  .regex(/^(?!\.+$)[\w.-]+$/, { error: 'MCP server names may hold only letters, digits, "_", "-" and "."' });

/**
 * Caching and filtering of one MCP server's tools. `expDays` is how long the cached toolset stays
 * fresh, in days; `filter`/`filterValue` work as on a toolset reference.
 */
export const McpServerOptionsSchema = z
  .strictObject({
    /** @default 30 (applied by the tools package) */
    expDays: z.int().min(1).optional(),
    ...filterFields,
  })
  .superRefine(checkFilterPair);

/** An MCP server started as a child process speaking stdio. Values are templates (`{{env.X}}`). */
export const McpStdioServerConfigSchema = z.strictObject({
  /** Written by the loader when the file leaves `type` out (stdio is the default transport). */
  type: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  config: McpServerOptionsSchema.optional(),
});

/** An MCP server reached over Streamable HTTP. `url` and header values are templates. */
export const McpHttpServerConfigSchema = z.strictObject({
  type: z.literal('http'),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
  config: McpServerOptionsSchema.optional(),
});

/**
 * One entry of `mcp_servers`: stdio `{command, args?, env?}` (no `type`, or `type: stdio`) or http
 * `{type: 'http', url, headers?}`, each with optional `config` {expDays?, filter?, filterValue?}.
 * The parsed value always carries `type`.
 * @see MCI schema reference, "MCP Servers"
 */
export const McpServerConfigSchema = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && !('type' in value)
      ? { type: 'stdio', ...value }
      : value,
  z.discriminatedUnion('type', [McpStdioServerConfigSchema, McpHttpServerConfigSchema]),
);

export type McpServerOptions = z.infer<typeof McpServerOptionsSchema>;
export type McpStdioServerConfig = z.infer<typeof McpStdioServerConfigSchema>;
export type McpHttpServerConfig = z.infer<typeof McpHttpServerConfigSchema>;
/** One MCP server of `mcp_servers` (parsed: `type` is always present). */
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;
