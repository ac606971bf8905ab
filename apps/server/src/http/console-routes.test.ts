import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { registerConsoleRoutes } from './console-routes.ts';
import type { HttpEnv } from './http-env.ts';

const dir = mkdtempSync(join(tmpdir(), 'mci-console-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function appWith(consoleDir: string) {
  const app = new Hono<HttpEnv>();
  registerConsoleRoutes(app, { dir: consoleDir });
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  return app;
}

const page = { headers: { accept: 'text/html' } };

describe('console routes', () => {
  it('without a built console: page loads say how to build it, assets fall through, nothing is logged', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const app = appWith(join(dir, 'missing'));
    const response = await app.request('/', page);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('pnpm --filter @mci/web build');
    expect((await app.request('/assets/index.js')).status).toBe(404);
    expect([...log.mock.calls, ...warn.mock.calls]).toEqual([]);
    log.mockRestore();
    warn.mockRestore();
  });

  it('with a built console: index.html for page loads, hashed assets cached for good', async () => {
    const built = join(dir, 'built');
    mkdirSync(join(built, 'assets'), { recursive: true });
    writeFileSync(join(built, 'index.html'), '<!doctype html><title>MCI</title>');
    writeFileSync(join(built, 'assets', 'index-abc123.js'), 'console.log(1)');
    const app = appWith(built);
    const index = await app.request('/processes/7', page);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    const asset = await app.request('/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await app.request('/processes/7', { headers: { accept: 'application/json' } })).status).toBe(404);
  });

  it('with a console url: page loads are redirected there (path and query kept), the API is not', async () => {
    const app = new Hono<HttpEnv>();
    registerConsoleRoutes(app, { dir: join(dir, 'missing'), url: 'http://127.0.0.1:5173/' });
    app.notFound((c) => c.json({ error: 'not found' }, 404));
    const response = await app.request('/processes/7?tab=calls', page);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('http://127.0.0.1:5173/processes/7?tab=calls');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect((await app.request('/processes/7', { headers: { accept: 'application/json' } })).status).toBe(404);
    expect((await app.request('/healthz', page)).status).toBe(404);
  });
});
