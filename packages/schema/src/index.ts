// Public API of @mci/schema: the MCI 1.0 tool-file model, its loader, toolsets, filters and queries.

// Schemas (zod), one per concept of the tool file
export {
  ApiKeyAuthSchema,
  AuthSchema,
  BasicAuthSchema,
  BearerAuthSchema,
  OAuth2AuthSchema,
} from './auth-schema.ts';
export {
  CliExecutionSchema,
  CliFlagSchema,
  DEFAULT_TIMEOUT_MS,
  ExecutionSchema,
  FileExecutionSchema,
  HttpBodySchema,
  HttpExecutionSchema,
  HttpMethodSchema,
  McpExecutionSchema,
  RetriesSchema,
  TextExecutionSchema,
} from './execution-schema.ts';
export { FilterTypeSchema, parseFilterValue } from './filter-value.ts';
export {
  McpHttpServerConfigSchema,
  McpServerConfigSchema,
  McpServerNameSchema,
  McpServerOptionsSchema,
  McpStdioServerConfigSchema,
} from './mcp-server-schema.ts';
export { MetadataSchema } from './metadata-schema.ts';
export { SCHEMA_VERSION, SchemaVersionSchema } from './schema-version.ts';
export { DEFAULT_LIBRARY_DIR, ToolFileSchema } from './tool-file-schema.ts';
export { AnnotationsSchema, InputSchemaSchema, ToolSchema } from './tool-schema.ts';
export { ToolsetFileSchema, ToolsetRefSchema } from './toolset-schema.ts';

// Loading: parse one document, or load a main file with its toolsets and MCP servers
export { loadToolFile } from './load-tool-file.ts';
export { parseToolFile, parseToolsetFile } from './parse-tool-file.ts';
export { formatSchemaIssue, SchemaError } from './schema-error.ts';
// Validation issues: zod issues as {code, message, path} in one path notation (tools[2].name)
export { locateToolset, TOOLSET_FILE_EXTENSIONS } from './toolset-locator.ts';

// JSON Schema: the one Ajv setup (tool-file checks here, props validation in @mci/tools)
export { createJsonSchemaValidator, jsonSchemaDialect } from './json-schema-validator.ts';

// Secrets: values replaced by [redacted:NAME] in what leaves the host
export {
  MIN_REDACTED_RUN,
  MIN_SECRET_LENGTH,
  Redactor,
  SecretError,
  secretsOfUrl,
  withoutCredentials,
} from './redactor.ts';
export type { Secret } from './redactor.ts';

// Querying: collections and filters
export { createToolCollection } from './tool-collection.ts';
export {
  MCP_HINT_TAG_ALIASES,
  matchesToolFilter,
  parseToolFilterArgument,
  schemaFilterToToolFilter,
} from './tool-filter.ts';

// Types inferred from the schemas (parsed values, defaults applied)
export type { ApiKeyAuth, Auth, BasicAuth, BearerAuth, OAuth2Auth } from './auth-schema.ts';
export type {
  CliExecution,
  CliFlag,
  Execution,
  ExecutionType,
  FileExecution,
  HttpBody,
  HttpExecution,
  HttpMethod,
  McpExecution,
  Retries,
  TextExecution,
} from './execution-schema.ts';
export type { FilterType } from './filter-value.ts';
export type {
  McpHttpServerConfig,
  McpServerConfig,
  McpServerOptions,
  McpStdioServerConfig,
} from './mcp-server-schema.ts';
export type { Metadata } from './metadata-schema.ts';
export type { ToolFile, ToolFileInput } from './tool-file-schema.ts';
export type { Annotations, InputSchema, Tool, ToolInput } from './tool-schema.ts';
export type { ToolsetFile, ToolsetRef } from './toolset-schema.ts';

// Types of loading and querying
export type { LoadToolFileOptions, McpToolsetResolver } from './load-tool-file.ts';
export type { SchemaErrorCode, SchemaIssue } from './schema-error.ts';
export type { JsonSchemaDialect, JsonSchemaValidator } from './json-schema-validator.ts';
export type { ResolvedTool, ToolCollection, ToolCollectionInit } from './tool-collection.ts';
export type { ToolFilter } from './tool-filter.ts';
export type { ToolsetLocation } from './toolset-locator.ts';

// Templating engine: placeholders, fallbacks, JSON-native values, @for/@foreach/@if blocks
export { parseTemplate, TEMPLATE_CACHE_SIZE } from './template/cache.ts';
export { collectEnvDefaults, collectEnvReferences } from './template/env-references.ts';
export { MAX_BLOCK_DEPTH, MAX_LOOP_ITERATIONS, MAX_OUTPUT_LENGTH } from './template/limits.ts';
export { renderTemplate } from './template/render.ts';
export { renderStructured } from './template/render-structured.ts';
export { TemplateError } from './template/template-error.ts';

// Templating types: the context, the error codes and the parsed tree
export type {
  ComparisonOperator,
  Condition,
  ForeachNode,
  ForNode,
  IfBranch,
  IfNode,
  LiteralOperand,
  LiteralValue,
  Operand,
  PathOperand,
  PlaceholderNode,
  TemplateNode,
  TextNode,
} from './template/ast.ts';
export type { TemplateContext } from './template/scope.ts';
export type { TemplateErrorCode, TemplateErrorDetails } from './template/template-error.ts';
