import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SCHEMA_VERSION, type ToolInput, ToolsetFileSchema } from '@mci/schema';

/** How long a cached MCP toolset stays fresh when the server config gives no `expDays`. */
export const DEFAULT_MCP_CACHE_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The cache file of one MCP server: a standard MCI toolset file plus `expiresAt` (ISO 8601), the
 * moment after which the server is asked again.
 */
export interface McpCacheFile {
  schemaVersion: string;
  metadata: { name: string; description: string };
  tools: ToolInput[];
  expiresAt: string;
}

/** Where the tools of `serverName` are cached: `{libraryDir}/mcp/{serverName}.mci.json`. */
export function mcpCachePath(libraryDir: string, serverName: string): string {
  return join(libraryDir, 'mcp', `${serverName}.mci.json`);
}

/**
 * Reads a cache file. Returns its tools when it exists, is a valid toolset file and has not expired
 * at `now` (ms since the epoch); `undefined` otherwise (a broken or stale cache is simply refreshed).
 */
export async function readMcpCache(path: string, now: number): Promise<ToolInput[] | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = ToolsetFileSchema.safeParse(raw);
  if (!parsed.success || parsed.data.expiresAt === undefined) return undefined;
  if (!(Date.parse(parsed.data.expiresAt) > now)) return undefined;
  return (raw as { tools: ToolInput[] }).tools;
}

/** Writes a cache file atomically (temporary file, then rename), creating `{libraryDir}/mcp/`. */
export async function writeMcpCache(
  path: string,
  serverName: string,
  tools: ToolInput[],
  now: number,
  expDays: number,
): Promise<void> {
  const file: McpCacheFile = {
    schemaVersion: SCHEMA_VERSION,
    metadata: { name: serverName, description: `Tools of MCP server "${serverName}", cached by MCI` },
    tools,
    expiresAt: new Date(now + expDays * DAY_MS).toISOString(),
  };
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`);
  await rename(temporary, path);
}
