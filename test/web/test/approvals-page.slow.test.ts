import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

describe('Approvals page', () => {
  it('lists what suspended processes wait for, live; Approve resumes one, Deny with a reason the other', async () => {
    await using server = await startServer({ policies: [{ tool: 'greet', decision: 'ask' }] });
    await using client = await testClient(server);
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(server.url);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Approvals' }).click();
    expect(new URL(page.url()).pathname).toBe('/approvals');
    await page.getByText('No process waits for an approval.').waitFor();

    // Processes created by another client appear as they suspend.
    const code = (name: string) =>
      `try { output((await tools.greet({ name: '${name}' })).content[0].text) } catch (e) { output(e.code + ': ' + e.message) }`;
    const ada = await client.createProcess(code('Ada'));
    const bob = await client.createProcess(code('Bob'));
    const rows = page.getByRole('table', { name: 'Approvals' }).getByRole('row', { name: /^Approval / });
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    expect(await page.getByRole('status', { name: 'Approval count' }).textContent()).toBe(
      '2 pending approvals',
    );
    expect((await rows.allTextContents()).join('\n')).toContain('greet({"name":"Ada"})');
    await screenshotAll(page, 'approvals');

    await page.getByRole('button', { name: `Approve greet({"name":"Ada"}) of process ${ada.pid}` }).click();
    await page
      .getByRole('textbox', { name: `Reason for greet({"name":"Bob"}) of process ${bob.pid}` })
      .fill('not Bob');
    await page.getByRole('button', { name: `Deny greet({"name":"Bob"}) of process ${bob.pid}` }).click();
    expect((await client.wait(ada.pid, { timeoutMs: 20_000 })).status).toBe('success');
    expect((await client.getResult(ada.pid)).outputs).toEqual(['Hello, Ada.']);
    await client.wait(bob.pid, { timeoutMs: 20_000 });
    expect((await client.getResult(bob.pid)).outputs).toEqual([
      'APPROVAL_DENIED: Tool greet failed: the call of greet was denied by local: not Bob',
    ]);
    await page.getByText('No process waits for an approval.').waitFor();

    // Every state: who decided and why.
    await page.getByRole('combobox', { name: 'State' }).selectOption('all');
    await expect.poll(() => rows.count()).toBe(2);
    const bobRow = rows.filter({ hasText: 'Bob' });
    expect(await bobRow.textContent()).toContain('denied');
    expect(await bobRow.textContent()).toContain('by local: not Bob');
    await screenshotAll(page, 'approvals-decided');
  });

  it('the Tools page marks a tool that asks first', async () => {
    await using server = await startServer({ policies: [{ tool: 'greet', decision: 'ask' }] });
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/tools`);
    const greet = page.getByRole('article', { name: 'greet', exact: true });
    await greet.waitFor();
    expect(await greet.getByRole('heading').textContent()).toBe('greet Greet someoneasks first');
    expect(
      await page
        .getByRole('article', { name: 'shopping_list', exact: true })
        .getByRole('heading')
        .textContent(),
    ).toBe('shopping_list Format a shopping list');
  });

  it('a suspended process shows Approve and Deny on its page', async () => {
    await using server = await startServer({ policies: [{ tool: 'greet', decision: 'ask' }] });
    await using client = await testClient(server);
    const process = await client.createProcess("output((await tools.greet({ name: 'Cy' })).content[0].text)");
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes/${process.pid}`);
    const approve = page.getByRole('button', { name: `Approve the call of process ${process.pid}` });
    await approve.waitFor({ timeout: 20_000 });
    await screenshotAll(page, 'process-suspended');
    await approve.click();
    expect((await client.wait(process.pid, { timeoutMs: 20_000 })).status).toBe('success');
  });
});
