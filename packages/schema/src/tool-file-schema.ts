import { z } from 'zod';
import { McpServerConfigSchema, McpServerNameSchema } from './mcp-server-schema.ts';
import { MetadataSchema } from './metadata-schema.ts';
import { SchemaVersionSchema } from './schema-version.ts';
import { ToolSchema } from './tool-schema.ts';
import { ToolsetRefSchema } from './toolset-schema.ts';

/** Default `libraryDir`, relative to the main tool file. */
export const DEFAULT_LIBRARY_DIR = './mci';

/**
 * The main MCI tool file (schema 1.0). At least one of `tools`, `toolsets`, `mcp_servers` must be
 * present. `libraryDir` is relative to the file; `enableAnyPaths` and `directoryAllowList` set the
 * path security of file and cli tools (tools may override them).
 * @see MCI schema reference, "Top-Level Schema Structure"
 */
export const ToolFileSchema = z
  .strictObject({
    /** Editor hint; ignored. */
    $schema: z.string().optional(),
    schemaVersion: SchemaVersionSchema,
    metadata: MetadataSchema.optional(),
    tools: z.array(ToolSchema).optional(),
    toolsets: z.array(ToolsetRefSchema).optional(),
    /** Server name to config. */
    mcp_servers: z.record(McpServerNameSchema, McpServerConfigSchema).optional(),
    /** @default './mci' */
    libraryDir: z.string().min(1).default(DEFAULT_LIBRARY_DIR),
    /** @default false */
    enableAnyPaths: z.boolean().default(false),
    /** Absolute, or relative to the tool file's directory. @default [] */
    directoryAllowList: z.array(z.string()).default([]),
  })
  .refine(
    (file) => file.tools !== undefined || file.toolsets !== undefined || file.mcp_servers !== undefined,
    {
      message: 'a tool file needs at least one of tools, toolsets or mcp_servers',
      // Checked even when other fields are invalid, so every issue of a file shows up at once.
      when: (payload) => {
        const raw = payload.value;
        return typeof raw === 'object' && raw !== null && !Array.isArray(raw);
      },
    },
  );

/** A parsed main tool file (defaults applied). */
export type ToolFile = z.infer<typeof ToolFileSchema>;
/** A main tool file as written (defaults not yet applied). */
export type ToolFileInput = z.input<typeof ToolFileSchema>;
