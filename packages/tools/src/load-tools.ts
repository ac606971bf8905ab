import { loadToolFile, type ToolCollection } from '@mci/schema';
import { createMcpToolsetResolver, type McpToolsetResolverOptions } from './mcp/mcp-toolset-resolver.ts';

/** Options of {@link loadTools}. */
export interface LoadToolsOptions extends McpToolsetResolverOptions {
  /** Environment for `{{env.X}}` in MCP server configs. @default process.env */
  env?: Record<string, string | undefined>;
}

/**
 * Loads a main tool file with its toolsets (see `loadToolFile` of `@mci/schema`) and the tools of
 * its MCP servers (cached under `{libraryDir}/mcp/`, see {@link createMcpToolsetResolver}).
 *
 * @throws {SchemaError} for invalid files, missing toolsets and MCP servers that fail
 * (`MCP_SERVER_FAILED`, naming the server).
 */
export function loadTools(path: string, options: LoadToolsOptions = {}): Promise<ToolCollection> {
  const { env, ...resolverOptions } = options;
  return loadToolFile(path, {
    env: env ? { ...process.env, ...env } : process.env,
    mcpResolver: createMcpToolsetResolver(resolverOptions),
  });
}
