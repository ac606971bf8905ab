import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage } from '../support/browser.ts';
import { startServer } from '../support/start-server.ts';

const page = (url: string, path: string) => fetch(`${url}${path}`, { headers: { Accept: 'text/html' } });

describe('mci serve serves the console', () => {
  it('index.html for page loads (no-cache, CSP of its own origin); the API keeps its paths', async () => {
    await using server = await startServer({
      tokens: [{ token: 'operator-token-0123456789', role: 'operator' }],
    });
    for (const path of [
      '/',
      '/processes',
      '/processes/12',
      '/tools',
      '/status',
      '/chat/abc',
      '/no/such/page',
    ]) {
      const response = await page(server.url, path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('cache-control'), path).toBe('no-cache');
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("connect-src 'self'");
      expect(csp, path).not.toMatch(/unsafe|\*/);
      expect(await response.text(), path).toContain('<div id="root">');
    }
    // API clients (no text/html in Accept) reach the API on the same paths, token required.
    const api = await fetch(`${server.url}/processes`);
    expect(api.status).toBe(401);
    const authorized = await fetch(`${server.url}/processes`, {
      headers: { Authorization: 'Bearer operator-token-0123456789' },
    });
    expect(await authorized.json()).toEqual({ items: [], processes: [] });
    // Data a person opens in a browser stays data.
    expect((await page(server.url, '/healthz')).headers.get('content-type')).toMatch(/json/);
    expect((await page(server.url, '/metrics')).status).toBe(401);
    expect((await page(server.url, '/models')).status).toBe(401);
  });

  it('hashed assets are immutable and compressed; the first load stays under 300 KB of compressed JavaScript', async () => {
    await using server = await startServer();
    const html = await (await page(server.url, '/')).text();
    const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${server.url}${script}`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('gzip');
    const brotli = await fetch(`${server.url}${script}`, { headers: { 'Accept-Encoding': 'br, gzip' } });
    expect(brotli.headers.get('content-encoding')).toBe('br');
    expect((await fetch(`${server.url}/assets/no-such-file.js`)).status).toBe(404);

    await using browser = await launchBrowser();
    const { page: tab } = await openPage(browser);
    await tab.goto(server.url);
    // No model: the console lands on Processes.
    await tab.getByRole('table', { name: 'Processes' }).waitFor();
    expect(new URL(tab.url()).pathname).toBe('/processes');
    const scripts = await tab.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter(
          (entry) =>
            (entry as PerformanceResourceTiming).initiatorType === 'script' || entry.name.endsWith('.js'),
        )
        .map((entry) => ({ name: entry.name, bytes: (entry as PerformanceResourceTiming).encodedBodySize })),
    );
    const total = scripts.reduce((sum, entry) => sum + entry.bytes, 0);
    console.info(`first load of / : ${scripts.length} scripts, ${(total / 1024).toFixed(1)} KB compressed`);
    expect(scripts.length).toBeGreaterThan(0);
    expect(total).toBeLessThan(300 * 1024);
  });
});
