import { describe, expect, it } from 'vitest';
import { openConsole } from '../support/open-console.ts';
import { replayChat } from '../support/start-server.ts';
import { replayTranscripts } from '../support/transcripts.ts';

const fence = '```';
const MANUAL_TURN = replayTranscripts('mci-web-manual-')('manual-turn.md', [
  `This block waits for you.\n\n${fence}ts exec=true\noutput('ran on the click');\n${fence}`,
  'Ran after the click.',
]);

describe('Chat page, manual run', () => {
  it('manual-run mode waits for the click', async () => {
    await using session = await openConsole(replayChat(MANUAL_TURN, 200));
    const { server, client, page } = session;
    await page.goto(`${server.url}/chat`);
    const autorun = page.getByRole('switch', { name: 'Run blocks automatically' });
    expect(await autorun.isChecked()).toBe(true);
    await autorun.uncheck();
    await page.getByRole('textbox', { name: 'Message' }).fill('Run it when I say');
    await page.getByRole('button', { name: 'Send' }).click();

    const card = page.getByRole('region', { name: /^Process \d+$/ });
    await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain('waits for Run');
    const pid = Number((await card.getAttribute('aria-label'))?.slice('Process '.length));
    // Nothing runs and the turn waits: the process has no run, no follow-up answer comes.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await client.get(pid)).toMatchObject({ state: 'idle', status: null, run: 0 });
    expect(await page.getByRole('article', { name: 'Assistant' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(1);

    await card.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain('success');
    expect(await card.textContent()).toContain('ran on the click');
    await expect
      .poll(() => page.getByRole('article', { name: 'Assistant' }).last().textContent(), { timeout: 30_000 })
      .toContain('Ran after the click.');

    // The setting stays with the conversation.
    await page.reload();
    await expect.poll(() => page.getByRole('article', { name: 'You' }).count()).toBe(1);
    await expect.poll(() => autorun.isChecked()).toBe(false);
  });
});
