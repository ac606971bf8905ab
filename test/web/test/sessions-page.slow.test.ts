import { launchBrowser } from '@mci/test-support';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

const TOKENS = [
  { token: 'alice-token-0123456789', role: 'client' as const, id: 'alice' },
  { token: 'bob-token-0123456789', role: 'client' as const, id: 'bob' },
];

async function signIn(page: Page, token: string): Promise<void> {
  const form = page.getByRole('form', { name: 'Sign in' });
  await form.getByLabel('Token').fill(token);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await form.waitFor({ state: 'detached' });
}

/** The state entry of `key` in the page (the session view, or the chat's side panel). */
const entry = (page: Page, key: string) => page.getByRole('listitem', { name: `Key ${key}`, exact: true });

describe('Sessions in the console', () => {
  it("lists a program's session, shows its state, deletes a key and the session; another principal sees none of it", async () => {
    await using server = await startServer({ tokens: TOKENS });
    await using alice = await testClient(server, TOKENS[0]!.token);
    await using bob = await testClient(server, TOKENS[1]!.token);
    const first = await alice.createProcess(
      `await state.set('rows', new Map([['north', 12], ['south', 7]]));
await state.set('total', 19n);
await state.set('note', 'kept for an hour', { ttlMs: 3_600_000 });
output('written');`,
      { session: 'report-1' },
    );
    await alice.wait(first.pid);
    const second = await alice.createProcess(
      `const total = await state.get('total');
await state.set('total', total + 1n);
output(String(total + 1n));`,
      { session: 'report-1' },
    );
    await alice.wait(second.pid);
    await alice
      .createProcess("await state.set('log', 'line\\n'.repeat(20_000))", { session: 'scratch' })
      .then((p) => alice.wait(p.pid));
    const theirs = await bob.createProcess("await state.set('secret', 'bob only')", { session: 'bobs' });
    await bob.wait(theirs.pid);

    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/sessions`);
    await signIn(page, TOKENS[0]!.token);
    const sessions = page.getByRole('table', { name: 'Sessions' });
    await expect.poll(() => sessions.getByRole('link').allTextContents()).toEqual(['scratch', 'report-1']);
    await screenshotAll(page, 'sessions');

    await sessions.getByRole('link', { name: 'Session report-1' }).click();
    await page.getByRole('heading', { name: 'Session report-1' }).waitFor();
    await expect
      .poll(() => page.getByRole('status', { name: 'State size' }).textContent())
      .toMatch(/^3 keys, /);
    // Keys in order, each with its version and value (in the output encoding, drawn as an output).
    const state = page.getByRole('region', { name: 'State' });
    expect(
      await state
        .getByRole('listitem')
        .evaluateAll((items) => items.map((item) => item.getAttribute('aria-label'))),
    ).toEqual(['Key note', 'Key rows', 'Key total']);
    await expect.poll(() => entry(page, 'rows').textContent()).toContain('north');
    expect(await entry(page, 'rows').textContent()).toContain('version 1');
    expect(await entry(page, 'rows').textContent()).toContain('Map');
    await expect.poll(() => entry(page, 'total').textContent()).toContain('20');
    expect(await entry(page, 'total').textContent()).toContain('version 2');
    expect(await entry(page, 'total').textContent()).toContain('bigint');
    await expect.poll(() => entry(page, 'note').textContent()).toContain('kept for an hour');
    expect(await entry(page, 'note').textContent()).toContain('expires');
    // Its processes, newest first, each linking to its process view.
    const processes = page.getByRole('table', { name: 'Processes' });
    expect(await processes.getByRole('link', { name: /^Process \d+$/ }).allTextContents()).toEqual([
      String(second.pid),
      String(first.pid),
    ]);
    await screenshotAll(page, 'session-detail');
    await page.screenshot({
      path: `${import.meta.dirname}/../screenshots/session-detail-full.png`,
      fullPage: true,
    });

    // A write from elsewhere shows after Refresh.
    await alice.sessions.setState('report-1', 'added', { by: 'the test' });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => entry(page, 'added').textContent()).toContain('the test');

    // Deleting a key removes it, on the server too.
    await entry(page, 'rows').getByRole('button', { name: 'Delete key rows' }).click();
    await expect.poll(() => entry(page, 'rows').count()).toBe(0);
    await expect(alice.sessions.getState('report-1', 'rows')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await entry(page, 'total').count()).toBe(1);

    // A process view links to its session.
    await processes.getByRole('link', { name: `Process ${first.pid}` }).click();
    await page.getByRole('heading', { name: `Process ${first.pid}` }).waitFor();
    await page.getByRole('definition').getByRole('link', { name: 'report-1' }).click();
    await page.getByRole('heading', { name: 'Session report-1' }).waitFor();

    // Delete session asks first; Cancel keeps it, Delete removes it and its state.
    await page.getByRole('button', { name: 'Delete session' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await alice.sessions.get('report-1')).state.length).toBe(3);
    await page.getByRole('button', { name: 'Delete session' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/sessions');
    await expect.poll(() => sessions.getByRole('link').allTextContents()).toEqual(['scratch']);
    await expect(alice.sessions.get('report-1')).rejects.toMatchObject({ code: 'NOT_FOUND' });

    // A large value is read only when asked for.
    await sessions.getByRole('link', { name: 'Session scratch' }).click();
    const show = entry(page, 'log').getByRole('button', { name: /^Show value \(1\d\d KiB\)$/ });
    await show.waitFor();
    expect(await entry(page, 'log').locator('.output').count()).toBe(0);
    await show.click();
    await expect
      .poll(() => entry(page, 'log').getByTitle('Value of log').textContent())
      .toContain('line\\nline');

    await screenshotAll(page, 'session-large-value');

    // Bob sees only his own session, and Alice's not even by its URL.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, TOKENS[1]!.token);
    await page.goto(`${server.url}/sessions`);
    await expect.poll(() => sessions.getByRole('link').allTextContents()).toEqual(['bobs']);
    await page.goto(`${server.url}/sessions/scratch`);
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/No session scratch/);
    expect(await page.getByRole('region', { name: 'State' }).count()).toBe(0);
    expect((await alice.sessions.get('scratch')).id).toBe('scratch');
  });

  it('pages older sessions with "Load older sessions"', async () => {
    await using server = await startServer();
    await using client = await testClient(server);
    for (let n = 0; n < 53; n++)
      await client.createProcess('output(1)', { session: `s-${String(n).padStart(2, '0')}` });
    const first = await client.sessions.list();
    const older = await client.sessions.list({ cursor: first.nextCursor! });
    expect(older.items.length).toBe(3);
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/sessions`);
    const links = page.getByRole('table', { name: 'Sessions' }).getByRole('link');
    await expect.poll(() => links.count()).toBe(50);
    expect(await links.allTextContents()).toEqual(first.items.map((session) => session.id));
    await page.getByRole('button', { name: 'Load older sessions' }).click();
    await expect.poll(() => links.count()).toBe(53);
    expect(await links.allTextContents()).toEqual(
      [...first.items, ...older.items].map((session) => session.id),
    );
    expect(await page.getByRole('button', { name: 'Load older sessions' }).count()).toBe(0);
  });
});
