import { launchBrowser } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { openPage, screenshotAll } from '../support/browser.ts';
import { openConsole } from '../support/open-console.ts';
import { replayChat, startServer } from '../support/start-server.ts';
import { replayTranscripts } from '../support/transcripts.ts';

const transcript = replayTranscripts('mci-web-chat-');

const fence = '```';
const TOOL_TURN = transcript('tool-turn.md', [
  `I will greet Ada with the tool.\n\n${fence}ts exec=true\nawait new Promise((resolve) => setTimeout(resolve, 800));\nconst r = await tools.greet({ name: 'Ada' });\noutput(r.content[0].text);\n${fence}`,
  'The tool answered: **Hello, Ada.**',
]);
const LOOP_TURN = transcript('loop-turn.md', [
  `This block never ends.\n\n${fence}ts exec=true\nwhile (true) {}\n${fence}`,
  'The loop was stopped.',
]);
const FAILING_TURN = transcript('failing-turn.md', [
  `This block fails on its third line.\n\n${fence}ts exec=true\nconst a = 1;\nconst b = a + 1;\nthrow new Error('third line fails');\n${fence}`,
  'It failed, as planned.',
]);

// Notes every state a process card's badge shows, in order (a MutationObserver in the page).
const RECORD_CARD_STATES = () => {
  const seen: string[] = [];
  (window as unknown as { cardStates: string[] }).cardStates = seen;
  new MutationObserver(() => {
    const badge = document.querySelector('section.process-card [data-state]');
    const state = badge?.getAttribute('data-state');
    if (state && seen.at(-1) !== state) seen.push(state);
  }).observe(document, { subtree: true, childList: true, attributes: true });
};

describe('Chat page', () => {
  it('a turn whose block calls a tool: the card goes queued, running, success with the value; the follow-up answer appears', async () => {
    await using session = await openConsole({ concurrency: 1, ...replayChat(TOOL_TURN, 200) });
    const { server, client, page } = session;
    await page.addInitScript(RECORD_CARD_STATES);
    await page.goto(server.url);
    const model = page.getByRole('combobox', { name: 'Model' });
    await expect.poll(() => model.inputValue()).toBe(`replay:${TOOL_TURN}`);
    // A replay model is shown by its transcript's file name, so a narrow picker does not cut it.
    expect(await model.locator('option').first().textContent()).toBe('replay:tool-turn.md');
    // The only sandbox is busy for a while, so the block's process waits in the queue first.
    const blocker = await client.createProcess('await new Promise((resolve) => setTimeout(resolve, 8000));');

    await page.getByRole('textbox', { name: 'Message' }).fill('Greet Ada');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/chat\/.+/);
    const card = page.getByRole('region', { name: /^Process \d+$/ });
    await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain('success');
    expect(await card.textContent()).toContain('Hello, Ada.');
    expect(await card.textContent()).toContain('greet');
    const states = await page.evaluate(() => (window as unknown as { cardStates: string[] }).cardStates);
    expect(states).toEqual(['queued', 'running', 'success']);
    await client.wait(blocker.pid);

    const answers = page.getByRole('article', { name: 'Assistant' });
    await expect
      .poll(() => answers.last().textContent(), { timeout: 30_000 })
      .toContain('The tool answered: Hello, Ada.');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isVisible()).toBe(true);
    await page
      .getByText(/Results sent to the model/)
      .first()
      .click();
    expect(await page.locator('details.message-results').first().textContent()).toContain('Hello, Ada.');
    expect(await page.getByRole('article', { name: 'You' }).textContent()).toContain('Greet Ada');
    await screenshotAll(page, 'chat');

    // The card's process names the conversation it came from.
    const conversationId = new URL(page.url()).pathname.slice('/chat/'.length);
    await card.getByRole('link', { name: /^Process \d+$/ }).click();
    await page.getByRole('link', { name: conversationId }).click();
    await page.getByRole('article', { name: 'You' }).waitFor();

    // The conversation is listed; rename it, then delete it.
    const list = page.getByRole('navigation', { name: 'Conversations' });
    await list.getByRole('button', { name: 'Rename Greet Ada' }).click();
    await list.getByRole('textbox', { name: 'Title' }).fill('Greetings');
    await list.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => list.getByRole('link', { name: 'Greetings' }).count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Greetings' }).count()).toBe(1);
    await list.getByRole('button', { name: 'Delete Greetings' }).click();
    await expect.poll(() => list.getByRole('link', { name: 'Greetings' }).count()).toBe(0);
    expect(new URL(page.url()).pathname).toBe('/chat');
    expect((await client.chat.list()).conversations).toEqual([]);
  });

  it('a tight loop is killed from its card; Stop ends the turn', async () => {
    await using server = await startServer(replayChat(LOOP_TURN, 200));
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/chat`);
    // Shift+Enter starts a new line; nothing is sent.
    const message = page.getByRole('textbox', { name: 'Message' });
    await message.pressSequentially('one');
    await message.press('Shift+Enter');
    await message.pressSequentially('two');
    expect(await message.inputValue()).toBe('one\ntwo');
    expect(new URL(page.url()).pathname).toBe('/chat');
    await page.getByRole('textbox', { name: 'Message' }).fill('Loop');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.getByRole('region', { name: /^Process \d+$/ });
    await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain('running');
    await card.getByRole('button', { name: 'Kill' }).click();
    await expect.poll(() => card.textContent(), { timeout: 20_000 }).toContain('canceled');
    await expect
      .poll(() => page.getByRole('article', { name: 'Assistant' }).last().textContent(), { timeout: 30_000 })
      .toContain('The loop was stopped.');

    // A second turn: the loop runs again, and Stop cancels the turn (its process is killed).
    await page.getByRole('textbox', { name: 'Message' }).fill('Loop again');
    await page.getByRole('button', { name: 'Send' }).click();
    const second = page.getByRole('region', { name: /^Process \d+$/ }).nth(1);
    await expect.poll(() => second.textContent(), { timeout: 30_000 }).toContain('running');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => second.textContent(), { timeout: 20_000 }).toContain('canceled');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).count(), { timeout: 20_000 }).toBe(1);
  });

  it("a failing block shows its error line highlighted in the answer's code", async () => {
    await using server = await startServer(replayChat(FAILING_TURN, 200));
    await using browser = await launchBrowser();
    const { page } = await openPage(browser);
    await page.goto(`${server.url}/chat`);
    await page.getByRole('textbox', { name: 'Message' }).fill('Fail');
    await page.getByRole('button', { name: 'Send' }).click();
    const block = page.getByRole('figure', { name: 'Block 1' }).first();
    const marked = block.locator('[aria-current="true"]');
    await expect.poll(() => marked.getAttribute('data-line'), { timeout: 30_000 }).toBe('3');
    expect(await marked.getByRole('note').textContent()).toContain('third line fails');
    await expect
      .poll(() => page.getByRole('article', { name: 'Assistant' }).last().textContent(), { timeout: 30_000 })
      .toContain('It failed, as planned.');
  });
});
