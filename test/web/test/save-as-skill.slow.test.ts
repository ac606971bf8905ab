import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { startServer, testClient } from '../support/start-server.ts';

// "Save as skill" in the console's process view: the process's code saved as a skill that the next
// program calls, and code that does not compile refused with the check's findings listed.

const SKILL = `export default async function hello(input: { name: string }) {
  return (await tools.greet({ name: input.name })).content[0].text;
}`;

describe('save as skill', () => {
  it("saves a process's code as a skill the next program calls; shows the findings of code that does not compile", async () => {
    await using server = await startServer();
    await using client = await testClient(server);
    await using browser = await launchBrowser();
    const good = await client.createProcess(SKILL, { autorun: false });
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/processes/${good.pid}`);
    await page.getByRole('button', { name: 'Save as skill' }).click();
    const form = page.getByRole('form', { name: 'Save as skill' });
    await form.getByLabel('Name').fill('hello');
    await form.getByLabel('Description').fill('Greets someone by name.');
    await form.getByRole('button', { name: 'Save skill' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toContain('Saved skill hello, version 1');
    const called = await client.createProcess(`return await skills.hello({ name: 'Ada' });`);
    expect((await client.wait(called.pid, { timeoutMs: 20_000 })).status).toBe('success');
    expect((await client.getResult(called.pid)).outputs).toEqual(['Hello, Ada.']);
    await screenshotAll(page, 'save-as-skill');

    const bad = await client.createProcess('export default async () => {\n  await tools.gret({});\n};', {
      autorun: false,
    });
    await page.goto(`${server.url}/processes/${bad.pid}`);
    await page.getByRole('button', { name: 'Save as skill' }).click();
    await page.getByLabel('Name').fill('broken');
    await page.getByRole('button', { name: 'Save skill' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(/^line 2, column 15: tools\.gret does not exist/),
    ]);
    expect((await client.listSkills()).items.map((skill) => skill.name)).toEqual(['hello']);
    await screenshotAll(page, 'save-as-skill-refused');
  });
});
