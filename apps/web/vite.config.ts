import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin, type ProxyOptions } from 'vite';

// The server this dev server forwards the API and the WebSocket to (`pnpm dev` starts one on 7687).
const target = process.env.MCI_URL ?? `http://127.0.0.1:${process.env.MCI_PORT ?? '7687'}`;

// Where this dev server listens: the console URL `pnpm dev`'s server redirects browsers to.
const consolePort = Number(new URL(process.env.MCI_CONSOLE_URL ?? 'http://127.0.0.1:5173').port || 80);

// Page URLs (`/processes`, `/tools`) share paths with the API: a browser navigation (Accept: text/html)
// gets the console's index.html, everything else goes to the server. `mci serve` makes the same choice.
const api: ProxyOptions = {
  target,
  bypass: (request) => (request.headers.accept?.includes('text/html') ? '/index.html' : undefined),
};

/**
 * Writes `.br` and `.gz` beside each built script and stylesheet, at the highest levels, once at
 * build time: `mci serve` sends them as they are (`Content-Encoding`) to browsers that accept them.
 */
const precompress = (): Plugin => ({
  name: 'mci-precompress',
  apply: 'build',
  writeBundle(options, bundle) {
    for (const file of Object.keys(bundle).filter((name) => /\.(js|css)$/.test(name))) {
      const path = `${options.dir}/${file}`;
      const source =
        bundle[file]!.type === 'chunk'
          ? (bundle[file] as { code: string }).code
          : (bundle[file] as { source: string | Uint8Array }).source;
      writeFileSync(
        `${path}.br`,
        brotliCompressSync(source, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
      );
      writeFileSync(`${path}.gz`, gzipSync(source, { level: 9 }));
    }
  },
});

/** Builds the console into `apps/server/console`, which `mci serve` serves at `/`. */
export default defineConfig({
  plugins: [react(), precompress()],
  resolve: {
    conditions: ['@mci/source', 'browser', 'module', 'development|production'],
    // @mci/client loads `ws` only in Node; the browser uses its global WebSocket.
    alias: { ws: fileURLToPath(new URL('./src/connection/no-ws.ts', import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL('../server/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2024',
  },
  // `pnpm dev`'s server redirects page loads to MCI_CONSOLE_URL (apps/server's dev script): vite
  // listens on its port, and a taken port stops vite rather than moving it where the redirect misses.
  server: {
    host: '127.0.0.1',
    port: consolePort,
    strictPort: true,
    proxy: {
      '/ws': { target, ws: true },
      '^/(processes|tools|tools\\.d\\.ts|healthz|metrics|models|conversations)(/.*)?$': api,
    },
  },
});
