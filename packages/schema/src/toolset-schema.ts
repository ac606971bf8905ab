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
 * A toolset file in `libraryDir`: `schemaVersion` (must match the main file's), optional `metadata`
 * (never merged), and `tools` (required). `toolsets`, `libraryDir`, `enableAnyPaths`,
 * `directoryAllowList` and `mcp_servers` belong to the main file only and are errors here.
 * @see MCI schema reference, "Toolset Schema Files"
 */
export const ToolsetFileSchema = z.strictObject({
  $schema: z.string().optional(),
  schemaVersion: SchemaVersionSchema,
  metadata: MetadataSchema.optional(),
  tools: z.array(ToolSchema),
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
