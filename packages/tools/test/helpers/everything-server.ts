import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The stdio server config of `@modelcontextprotocol/server-everything`, started with this Node
 * binary and the package's resolved entry point (no npx, so it works offline).
 */
export function everythingServer(config?: Record<string, unknown>): Record<string, unknown> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  return { command: process.execPath, args: [entry, 'stdio'], ...(config ? { config } : {}) };
}
