import { build } from 'vite';
import { webPath } from './paths.ts';

/**
 * Vitest global setup of the `web` project: builds the console once (`vite build` of apps/web into
 * apps/server/console), so the servers the tests start serve the current source. Vitest sets
 * NODE_ENV=test, which would make React's development build: the build runs with `production`.
 */
export default async function buildConsole(): Promise<void> {
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
