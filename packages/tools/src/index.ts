// Public API of @mci/tools: executes MCI tools (http, cli, file, text, MCP servers) by name.

// Running tools
export { createToolRunner, DEFAULT_MAX_OUTPUT_BYTES } from './tool-runner.ts';
// Loading tool files together with their MCP servers' tools
export { loadTools } from './load-tools.ts';
export { createMcpToolsetResolver } from './mcp/mcp-toolset-resolver.ts';
export { DEFAULT_MCP_CACHE_DAYS, mcpCachePath } from './mcp/mcp-cache.ts';
// What a tool file needs from the environment
export { collectEnvUsage, envByTool } from './env-usage.ts';
// Validating input against a JSON Schema (tool props, skill input)
export { PropsValidator } from './props-validator.ts';
// Results and errors
export { CANCELED_MESSAGE, errorResult, textResult } from './tool-result.ts';
export { ToolError } from './tool-error.ts';
// Path security (shared with anything that must honour the same rules)
export { checkPath, isInside, PathViolation, pathPolicyFor } from './path-policy.ts';

// Types
export type { ExecuteOptions, ToolInfo, ToolRunner, ToolRunnerOptions } from './tool-runner.ts';
export type { LoadToolsOptions } from './load-tools.ts';
export type { PropsValidation } from './props-validator.ts';
export type { McpToolsetResolverOptions } from './mcp/mcp-toolset-resolver.ts';
export type { McpCacheFile } from './mcp/mcp-cache.ts';
export type {
  AudioContent,
  Content,
  EmbeddedResourceContent,
  ImageContent,
  ResourceLinkContent,
  TextContent,
  ToolResult,
} from './tool-result.ts';
export type { ToolErrorCode } from './tool-error.ts';
export type { EnvUsage, EnvUsageProblem, EnvUse, ToolEnvVariable } from './env-usage.ts';
export type { PathPolicy, PathSettings } from './path-policy.ts';
