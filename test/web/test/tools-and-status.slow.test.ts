import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { openConsole } from '../support/open-console.ts';
import { startServer, testClient } from '../support/start-server.ts';

describe('Tools and Status pages', () => {
  it('the tool form calls the tool through a process and shows its result', async () => {
    await using server = await startServer();
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(server.url);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Tools' }).click();
    expect(new URL(page.url()).pathname).toBe('/tools');
    const greet = page.getByRole('article', { name: 'greet' });
    await greet.waitFor();
    expect(await greet.textContent()).toContain('Returns a greeting');
    await greet.getByText('TypeScript declaration').click();
    expect(await greet.getByRole('figure', { name: 'Declaration of greet' }).textContent()).toContain(
      'greet(props: {',
    );
    await greet.getByText('Try it').click();
    await greet.getByRole('textbox', { name: /^name/ }).fill('Ada');
    await greet.getByRole('checkbox', { name: /^excited/ }).check();
    await screenshotAll(page, 'tools');
    await greet.getByRole('button', { name: 'Run tool' }).click();
    const result = greet.getByRole('region', { name: 'Result of greet' });
    await expect.poll(() => result.textContent(), { timeout: 20_000 }).toContain('Hello, Ada!!!');
    expect(await result.textContent()).toContain('success');

    // The call was a process like any other, visible to the test's client.
    await using client = await testClient(server);
    const [process] = await client.list({ ref: 'console:tool:greet' });
    expect(process?.status).toBe('success');
  });

  it('a tool card names the secrets the tool uses and whether each is set, never a value', async () => {
    const token = 'demo-token-0123456789abcdef';
    await using server = await startServer({ env: { DEMO_API_TOKEN: token }, publicEnv: ['DEMO_API_URL'] });
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/tools`);
    const post = page.getByRole('article', { name: 'api_post' });
    await post.waitFor();
    expect(await post.textContent()).toContain('Uses the secrets DEMO_API_TOKEN: the server adds them');
    expect(await page.getByRole('article', { name: 'api_get' }).textContent()).not.toContain(
      'Uses the secrets',
    );
    expect(await page.content()).not.toContain(token);
    await screenshotAll(page, 'tools-secrets');
  });

  it('a field whose text is not JSON is named, and nothing runs', async () => {
    await using server = await startServer();
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/tools`);
    const list = page.getByRole('article', { name: 'shopping_list' });
    await list.getByText('Try it').click();
    await list.getByRole('textbox', { name: /^items/ }).fill('[{"name": "milk"');
    await list.getByRole('button', { name: 'Run tool' }).click();
    expect(await list.getByRole('alert').textContent()).toBe('items must be JSON');
    await using client = await testClient(server);
    expect(await client.list()).toEqual([]);
  });

  it('the Status page shows health, load and processes by status', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    const failing = await client.createProcess("throw new Error('no')");
    const passing = await client.createProcess('output(1)');
    await Promise.all([client.wait(failing.pid), client.wait(passing.pid)]);
    await page.goto(`${server.url}/status`);
    await expect.poll(() => page.getByRole('status', { name: 'Health' }).textContent()).toBe('ok');
    const stats = page.getByRole('definition').filter({ hasText: /^\d+%?$/ });
    await stats.first().waitFor();
    // The load figures: each term with its definition (the page's only description list).
    const terms = await page.getByRole('term').allTextContents();
    const values = await page.getByRole('definition').allTextContents();
    const figures = Object.fromEntries(terms.map((term, i) => [term, values[i]]));
    expect(figures).toMatchObject({ 'Pool size': '2', Running: '0', Utilisation: '0%', Idle: '2' });
    const legend = page.getByRole('figure').getByRole('listitem');
    await expect.poll(() => legend.filter({ hasText: 'success' }).textContent()).toContain('success: 1');
    expect(await legend.filter({ hasText: 'failed' }).textContent()).toContain('failed: 1');
    // A third process between polls, so the chart shows a change.
    await client.wait((await client.createProcess('output(2)')).pid);
    await expect.poll(() => legend.filter({ hasText: 'success' }).textContent()).toContain('success: 2');
    await expect
      .poll(() => page.getByText(/\d+ samples/).textContent())
      .toMatch(/[3-9] samples|\d{2} samples/);
    // Axes: processes up the side (0 to the largest count), the first and last sample's time below.
    const yAxis = page.getByRole('list', { name: 'Processes (y axis)' }).getByRole('listitem');
    expect(await yAxis.allTextContents()).toEqual(['0', '1', '2']);
    expect(await page.getByRole('list', { name: 'Time (x axis)' }).locator('time').count()).toBe(2);
    // timeout, canceled and none are all 0: each line drawn over another is narrower, so all show.
    const widths = await page
      .locator('.status-chart polyline')
      .evaluateAll((lines) => lines.map((line) => Number.parseFloat(getComputedStyle(line).strokeWidth)));
    expect(widths).toHaveLength(5);
    expect(widths.every((width, i) => i === 0 || width < widths[i - 1]!)).toBe(true);
    await screenshotAll(page, 'status');
  });
});
