import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'vite';
import { repoPath, webPath } from './paths.ts';

/** What the console is built from: its own sources and the workspace packages it bundles. */
const SOURCES = [
  webPath('src'),
  webPath('index.html'),
  webPath('vite.config.ts'),
  webPath('package.json'),
  repoPath('packages/client/src'),
  repoPath('packages/protocol/src'),
];

/** The latest modification time (ms) of a file, or of any file below a directory; 0 when missing. */
function newest(path: string): number {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(stats.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/**
 * Vitest global setup of the `web` projects: builds the console (`vite build` of apps/web into
 * apps/server/console) when the build is older than any of its sources, so the servers the tests
 * start serve the current source; `pnpm install` has built it already on a fresh clone. Vitest sets
 * NODE_ENV=test, which would make React's development build: the build runs with `production`.
 */
export default async function buildConsole(): Promise<void> {
  const built = newest(repoPath('apps/server/console/index.html'));
  if (built > Math.max(...SOURCES.map(newest))) return;
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      root: webPath(),
      configFile: webPath('vite.config.ts'),
      mode: 'production',
      logLevel: 'warn',
    });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
}
