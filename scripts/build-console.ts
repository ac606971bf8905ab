// Runs after `pnpm install`: builds the web console into apps/server/console, so `mci serve` in a
// source checkout serves it at `/` with no other step. An install without dev dependencies (no vite)
// skips the build and says so; `pnpm dev` serves the console from source instead.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const web = fileURLToPath(new URL('../apps/web/', import.meta.url));
let vitePath: string;
try {
  vitePath = createRequire(`${web}package.json`).resolve('vite');
} catch {
  console.warn('web console not built (vite is not installed): run pnpm --filter @mci/web build');
  process.exit(0);
}
// Typed here: vite is a dependency of apps/web only, so the root program cannot resolve its types.
const { build } = (await import(pathToFileURL(vitePath).href)) as {
  build(config: { root: string; configFile: string; mode: string; logLevel: 'error' }): Promise<unknown>;
};
// React's production build, whatever NODE_ENV the installer runs with.
process.env.NODE_ENV = 'production';
await build({ root: web, configFile: `${web}vite.config.ts`, mode: 'production', logLevel: 'error' });
console.info('web console built into apps/server/console');
