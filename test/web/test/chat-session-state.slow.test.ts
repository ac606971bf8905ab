import { describe, expect, it } from 'vitest';
import { screenshotAll } from '../support/browser.ts';
import { openConsole } from '../support/open-console.ts';
import { replayChat } from '../support/start-server.ts';
import { replayTranscripts } from '../support/transcripts.ts';

const fence = '```';
// Two turns: the first block keeps a list in the conversation's state, the second adds to it.
const TRANSCRIPT = replayTranscripts('mci-web-chat-state-')('state-turns.md', [
  `I will remember the cities.\n\n${fence}ts exec=true\nawait state.set('cities', ['Paris', 'Oslo']);\nawait state.set('asked', new Date('2026-11-28T12:00:00Z'));\noutput('saved');\n${fence}`,
  'I saved **2 cities**.',
  `I will add Lima.\n\n${fence}ts exec=true\nconst cities = await state.get('cities');\nawait state.set('cities', [...cities, 'Lima']);\noutput(cities.length + 1);\n${fence}`,
  'Now there are **3 cities**.',
]);

describe("a conversation's session state beside the chat", () => {
  it('shows the state each run of the conversation wrote, updated after each run', async () => {
    await using session = await openConsole(replayChat(TRANSCRIPT, 400));
    const { server, client, page } = session;
    await page.goto(`${server.url}/chat`);
    // A new conversation has no session yet: no panel.
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    expect(await page.getByText('Session state').count()).toBe(0);

    await page.getByRole('textbox', { name: 'Message' }).fill('Remember Paris and Oslo');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/.+/);
    const conversationId = new URL(page.url()).pathname.slice('/chat/'.length);
    const panel = page.getByRole('region', { name: 'Session state' });
    const cities = panel.getByRole('listitem', { name: 'Key cities' });
    await expect.poll(() => cities.textContent(), { timeout: 30_000 }).toContain('Oslo');
    expect(await cities.textContent()).toContain('version 1');
    await expect
      .poll(() => panel.getByRole('listitem', { name: 'Key asked' }).textContent())
      .toContain('Date');
    await expect
      .poll(() => page.getByRole('article', { name: 'Assistant' }).last().textContent(), { timeout: 30_000 })
      .toContain('I saved 2 cities');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isVisible()).toBe(true);

    // The second turn's block changes the value: the panel follows.
    await page.getByRole('textbox', { name: 'Message' }).fill('Add Lima');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => cities.textContent(), { timeout: 30_000 }).toContain('Lima');
    expect(await cities.textContent()).toContain('version 2');
    await expect
      .poll(() => page.getByRole('article', { name: 'Assistant' }).last().textContent(), { timeout: 30_000 })
      .toContain('Now there are 3 cities');
    expect((await client.sessions.getState(conversationId, 'cities')).value).toEqual([
      'Paris',
      'Oslo',
      'Lima',
    ]);
    await screenshotAll(page, 'chat-session-state');

    // Narrow screens show it as a section above the messages, closed at first.
    await page.setViewportSize({ width: 400, height: 800 });
    await page.reload();
    const summary = page.getByText('Session state (2)');
    await summary.waitFor();
    expect(await cities.isVisible()).toBe(false);
    await summary.click();
    await expect.poll(() => cities.isVisible()).toBe(true);
    await page.screenshot({
      path: `${import.meta.dirname}/../screenshots/chat-session-state-open-narrow.png`,
    });

    // The panel opens the session view.
    await panel.getByRole('link', { name: 'Open session' }).click();
    await page.getByRole('heading', { name: `Session ${conversationId}` }).waitFor();
    await page.getByRole('definition').getByRole('link', { name: conversationId }).waitFor();
    // Its processes are the conversation's blocks; a block's process view links back to the session.
    const blocks = page
      .getByRole('table', { name: 'Processes' })
      .getByRole('link', { name: /^Process \d+$/ });
    await expect.poll(() => blocks.count()).toBe(2);
    await blocks.last().click();
    await page.getByRole('link', { name: "the conversation's session" }).click();
    await page.getByRole('heading', { name: `Session ${conversationId}` }).waitFor();
  });
});
