import { z } from 'zod';
import { ExecutionSchema } from './execution-schema.ts';

/**
 * Advisory hints about a tool's behaviour (the MCP tool annotations). Unknown hints are kept.
 * @see MCI schema reference, "Annotations"
 */
export const AnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/**
 * A JSON Schema describing a tool's input (an object; its keywords are checked by the loader).
 * @see https://json-schema.org/
 */
export const InputSchemaSchema = z.record(z.string(), z.unknown());

/**
 * One tool: a name, what it is for, its input schema and how it executes.
 * `enableAnyPaths` and `directoryAllowList` override the tool file's values for this tool.
 * @see MCI schema reference, "Tool Definition"
 */
export const ToolSchema = z.strictObject({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  /** A disabled tool behaves as if it did not exist. @default false */
  disabled: z.boolean().default(false),
  annotations: AnnotationsSchema.optional(),
  /** Case-sensitive tags used by filters. @default [] */
  tags: z.array(z.string()).default([]),
  inputSchema: InputSchemaSchema.optional(),
  execution: ExecutionSchema,
  enableAnyPaths: z.boolean().optional(),
  directoryAllowList: z.array(z.string()).optional(),
});

export type Annotations = z.infer<typeof AnnotationsSchema>;
export type InputSchema = z.infer<typeof InputSchemaSchema>;
/** A tool as parsed (defaults applied). */
export type Tool = z.infer<typeof ToolSchema>;
/** A tool as written in a file (defaults not yet applied). */
export type ToolInput = z.input<typeof ToolSchema>;
