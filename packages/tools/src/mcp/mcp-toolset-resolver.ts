import type { McpToolsetResolver, ToolInput } from '@mci/schema';
import type { Tool } from '@mci/schema';
import { DEFAULT_MCP_CACHE_DAYS, mcpCachePath, readMcpCache, writeMcpCache } from './mcp-cache.ts';
import { McpConnection } from './mcp-connection.ts';
import { renderServerTarget } from './mcp-server-target.ts';
import { mcpToolToMciTool } from './mcp-tool-conversion.ts';

/** Options of {@link createMcpToolsetResolver}. */
export interface McpToolsetResolverOptions {
  /** The clock, in ms since the epoch (tests move it to expire caches). @default Date.now */
  now?: () => number;
  /** Bounds connecting to a server and listing its tools, in milliseconds. @default 60000 */
  timeoutMs?: number;
  /** Ignore existing cache files and ask every server (the cache is still rewritten). @default false */
  refresh?: boolean;
}

/**
 * The resolver `loadToolFile` calls for each `mcp_servers` entry. It returns the cached toolset at
 * `{libraryDir}/mcp/{serverName}.mci.json` when it has not expired; otherwise it connects (stdio or
 * Streamable HTTP, config templates rendered with `env`), lists every tool with `tools/list`
 * (following pagination), converts them to MCI tools (`execution: {type: 'mcp', ...}`, annotation
 * tags), writes the cache with an expiry of `config.expDays` (default 30) days and disconnects.
 * Filters (`config.filter`) are applied by the loader, so the cache holds every tool.
 *
 * @throws {ToolError} `MCP_SERVER_UNAVAILABLE` (the loader reports it under the server's name).
 */
export function createMcpToolsetResolver(options: McpToolsetResolverOptions = {}): McpToolsetResolver {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 60_000;
  return async (serverName, config, { libraryDir, env }) => {
    const cachePath = mcpCachePath(libraryDir, serverName);
    if (!options.refresh) {
      const cached = await readMcpCache(cachePath, now());
      if (cached) return cached as Tool[];
    }
    const connection = new McpConnection(serverName, renderServerTarget(serverName, config, env));
    let tools: ToolInput[];
    try {
      const listed = await connection.listTools(AbortSignal.timeout(timeoutMs));
      tools = listed.map((tool) => mcpToolToMciTool(serverName, tool));
    } finally {
      await connection.close();
    }
    await writeMcpCache(
      cachePath,
      serverName,
      tools,
      now(),
      config.config?.expDays ?? DEFAULT_MCP_CACHE_DAYS,
    );
    // The loader validates and fills defaults (`disabled`, `tags`) like it does for file tools.
    return tools as Tool[];
  };
}
