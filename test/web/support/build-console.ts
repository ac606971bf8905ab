import { build } from 'vite';
import { webPath } from './paths.ts';

/**
 * Vitest global setup of the `web` project: builds the console once (`vite build` of apps/web into
 * apps/server/console), so the servers the tests start serve the current source.
 */
export default async function buildConsole(): Promise<void> {
  await build({ root: webPath(), configFile: webPath('vite.config.ts'), logLevel: 'warn' });
}
