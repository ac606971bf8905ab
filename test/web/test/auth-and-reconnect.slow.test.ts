import { launchBrowser } from '@mci/test-support';
import type { WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { openConsole } from '../support/open-console.ts';
import { processCount, processRow } from '../support/page-helpers.ts';
import { startServer, testClient } from '../support/start-server.ts';

const TOKENS = [
  { token: 'alice-token-0123456789', role: 'client' as const, id: 'alice' },
  { token: 'bob-token-0123456789', role: 'client' as const, id: 'bob' },
];

describe('sign-in and reconnecting', () => {
  it("a client token signs in and cannot see another client's processes", async () => {
    await using server = await startServer({ tokens: TOKENS });
    await using alice = await testClient(server, TOKENS[0]!.token);
    await using bob = await testClient(server, TOKENS[1]!.token);
    const mine = await alice.createProcess("output('alice')");
    const theirs = await bob.createProcess("output('bob')");
    await Promise.all([alice.wait(mine.pid), bob.wait(theirs.pid)]);

    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes`);
    const signIn = page.getByRole('form', { name: 'Sign in' });
    await signIn.waitFor();
    await screenshotAll(page, 'sign-in');
    await signIn.getByLabel('Token').fill('not-a-token');
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => signIn.getByRole('alert').textContent()).toMatch(/token/i);
    // Signed out (with a refused token): nothing to sign out of.
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);

    await signIn.getByLabel('Token').fill(TOKENS[0]!.token);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => processCount(page)).toBe('1 of 1 processes');
    expect(await processRow(page, mine.pid).textContent()).toContain('success');
    expect(await processRow(page, theirs.pid).count()).toBe(0);
    expect(await page.getByRole('banner').textContent()).toContain('alice (client)');

    // Bob's process does not exist for Alice, not even by its URL; the token survives the reload.
    await page.goto(`${server.url}/processes/${theirs.pid}`);
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/not found|no process/i);
    await page.goto(`${server.url}/processes/${mine.pid}`);
    await expect.poll(() => page.getByRole('region', { name: 'Run 1' }).textContent()).toContain('alice');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
  });

  it('a dropped WebSocket shows "Reconnecting…", reconnects and catches up with what it missed', async () => {
    await using session = await openConsole();
    const { server, client, page } = session;
    let refuse = false;
    const routes: Array<{ page: WebSocketRoute; server: WebSocketRoute }> = [];
    await page.routeWebSocket(/\/ws/, (ws) => {
      if (refuse) {
        ws.close({ code: 1013, reason: 'test: try again later' });
        return;
      }
      routes.push({ page: ws, server: ws.connectToServer() });
    });
    await page.goto(`${server.url}/processes`);
    const before = await client.createProcess('output(1)');
    await client.wait(before.pid);
    await expect.poll(() => processRow(page, before.pid).textContent()).toContain('success');

    refuse = true;
    for (const route of routes) {
      await route.server.close({ code: 1001, reason: 'test: dropped' });
      await route.page.close({ code: 4000, reason: 'test: dropped' });
    }
    const connection = page.getByRole('status', { name: 'Connection' });
    await expect.poll(() => connection.textContent()).toBe('Reconnecting…');
    await screenshotAll(page, 'reconnecting');
    // Events while the page is away: three new processes run to the end.
    const missed = await Promise.all([1, 2, 3].map((n) => client.createProcess(`output(${n})`)));
    await Promise.all(missed.map((process) => client.wait(process.pid)));

    refuse = false;
    await expect.poll(() => connection.textContent(), { timeout: 30_000 }).toBe('Connected');
    await expect.poll(() => processCount(page)).toBe('4 of 4 processes');
    for (const process of missed) {
      await expect.poll(() => processRow(page, process.pid).textContent()).toContain('success');
    }
  });
});
