import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import type { HttpEnv } from './http-env.ts';

/** Where `pnpm --filter @mci/web build` puts the console (`apps/server/console`, shipped with the package). */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/** Built file names carry a content hash, so a file under `/assets/` never changes. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

// Only the console's own origin: scripts, styles, fetches and the WebSocket (`'self'` covers ws: on the
// same host), images and sounds also as data: URLs (pictures of runs, tool results' content).
const consoleHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:', 'blob:'],
    mediaSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    fontSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  crossOriginEmbedderPolicy: false,
});

// API paths a person may open in a browser and should see as data, not as the console.
const API_ONLY = /^\/(?:ws|healthz|metrics|models|mcp|tools\.d\.ts)$|^\/processes\/\d+\/./;

/** Sets `Cache-Control` on a file the next handler found (a miss falls through untouched). */
const cacheControl =
  (value: string): MiddlewareHandler =>
  async (c, next) => {
    await next();
    if (c.res.ok) c.res.headers.set('Cache-Control', value);
  };

/**
 * A page load by a browser (it asks for HTML): gets the console's `index.html`, whatever the path,
 * so `/processes/42` opens the console there. API clients (`Accept: application/json` or `*\/*`)
 * reach the API on the same paths.
 */
function isPageLoad(c: Context): boolean {
  return (c.req.header('accept') ?? '').includes('text/html') && !API_ONLY.test(c.req.path);
}

/** Where the console comes from: built files, or a console served elsewhere. */
export interface ConsoleSource {
  /** The built console (`index.html` and `assets/`). @default {@link DEFAULT_CONSOLE_DIR} */
  dir?: string;
  /**
   * A console served at another origin (`pnpm dev`: Vite's dev server, `http://127.0.0.1:5173`):
   * page loads are redirected there, path and query kept, and `dir` is not read.
   */
  url?: string;
}

/** Whether `dir` holds a built console (its `index.html`). */
export function isConsoleBuilt(dir: string = DEFAULT_CONSOLE_DIR): boolean {
  return existsSync(`${dir}/index.html`);
}

/**
 * Serves the web console (see docs/web.md) from `dir`: `/assets/*` (hashed, cached for good, sent
 * brotli- or gzip-compressed from the `.br`/`.gz` files the build wrote) and `index.html`
 * (`no-cache`) for every page load, with a Content-Security-Policy that allows only the server's own
 * origin. No token is needed for these files: the console signs in over
 * the API. When the console is not built, page loads get a short page saying how to build it. With
 * `url`, page loads are redirected (302) to the console served there instead.
 * Register before the API's authentication middleware.
 */
export function registerConsoleRoutes(
  app: Hono<HttpEnv>,
  { dir = DEFAULT_CONSOLE_DIR, url }: ConsoleSource = {},
): void {
  if (url !== undefined) {
    const base = url.replace(/\/+$/, '');
    app.on(['GET', 'HEAD'], '*', (c, next) => {
      if (!isPageLoad(c)) return next();
      const { pathname, search } = new URL(c.req.url);
      c.header('Cache-Control', 'no-store');
      return c.redirect(`${base}${pathname}${search}`, 302);
    });
    return;
  }
  const built = isConsoleBuilt(dir);
  if (built) {
    app.use(
      '/assets/*',
      consoleHeaders,
      cacheControl(IMMUTABLE),
      serveStatic({ root: dir, precompressed: true }),
    );
  }
  const pages = new Hono();
  pages.use(consoleHeaders);
  if (built) {
    pages.get('*', cacheControl('no-cache'), serveStatic({ root: dir, path: 'index.html' }));
  } else {
    pages.get('*', (c) =>
      c.html(
        '<!doctype html><title>MCI</title><p>The web console is not built: run <code>pnpm --filter @mci/web build</code> (<code>pnpm install</code> builds it too), or <code>pnpm dev</code> for a console that reloads as you edit it.</p>',
        503,
        { 'Cache-Control': 'no-cache' },
      ),
    );
  }
  app.on(['GET', 'HEAD'], '*', (c, next) => (isPageLoad(c) ? pages.fetch(c.req.raw, c.env) : next()));
}
