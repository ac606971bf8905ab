import { z } from 'zod';
import { checkFilterPair, filterFields } from './filter-value.ts';
import { MetadataSchema } from './metadata-schema.ts';
import { SchemaVersionSchema } from './schema-version.ts';
import { ToolSchema } from './tool-schema.ts';

/**
 * A reference from the main file to a toolset in `libraryDir`, with an optional schema-level filter
 * (`filterValue` is a comma-separated list; see {@link parseFilterValue}). A bare string is read as
 * `{ name }`.
 * @see MCI schema reference, "Toolset Object"
 */
export const ToolsetRefSchema = z.preprocess(
  (value) => (typeof value === 'string' ? { name: value } : value),
  z
    .strictObject({
      /** File or directory name inside `libraryDir` (see the loader for the lookup order). */
      name: z.string().min(1),
      ...filterFields,
    })
    .superRefine(checkFilterPair),
);

const onlyInMainFile = (field: string) =>
  z.never({ error: `toolset files may not set ${field}: only the main tool file can` }).optional();

/**
 * When a cached MCP toolset goes stale: an ISO 8601 date (`2025-11-04`, as mci-py writes it) or
 * date-time (`2025-11-04T10:00:00.000Z`, as this project writes it).
 */
export const ExpiresAtSchema = z
  .string()
  .refine((value) => /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value)), {
    error: 'expected an ISO 8601 date or date-time, like 2025-11-04 or 2025-11-04T10:00:00Z',
  });

/**
 * A toolset file in `libraryDir`: `schemaVersion` (must match the main file's), optional `metadata`
 * (never merged), `tools` (required) and, in a cached MCP toolset (`{libraryDir}/mcp/`), `expiresAt`.
 * `toolsets`, `libraryDir`, `enableAnyPaths`, `directoryAllowList` and `mcp_servers` belong to the
 * main file only and are errors here.
 * @see MCI schema reference, "Toolset Schema Files" and "MCP Servers" (the toolset cache)
 */
export const ToolsetFileSchema = z.strictObject({
  $schema: z.string().optional(),
  schemaVersion: SchemaVersionSchema,
  metadata: MetadataSchema.optional(),
  tools: z.array(ToolSchema),
  expiresAt: ExpiresAtSchema.optional(),
  toolsets: onlyInMainFile('toolsets'),
  libraryDir: onlyInMainFile('libraryDir'),
  enableAnyPaths: onlyInMainFile('enableAnyPaths'),
  directoryAllowList: onlyInMainFile('directoryAllowList'),
  mcp_servers: onlyInMainFile('mcp_servers'),
});

/** A toolset reference as parsed (a bare string becomes `{ name }`). */
export type ToolsetRef = z.infer<typeof ToolsetRefSchema>;
/** A parsed toolset file. */
export type ToolsetFile = z.infer<typeof ToolsetFileSchema>;
