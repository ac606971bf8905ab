import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer } from '../src/server.ts';
import { openJsonSocket } from './support/json-socket.ts';

// A conversation with autorun false over the real WebSocket protocol: the answer's blocks become idle
// processes that wait for a run signal, and the loop sends the results back only once every block ran.

const dir = mkdtempSync(join(tmpdir(), 'mci-chat-manual-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const toolFile = join(dir, 'tools.yaml');
writeFileSync(toolFile, "schemaVersion: '1.0'\ntools: []\n");
const fence = '```';
const transcript = join(dir, 'two-blocks.md');
writeFileSync(
  transcript,
  `## assistant\nTwo blocks.\n\n${fence}ts exec=true\noutput('first');\n${fence}\n\n${fence}ts exec=true\noutput('second');\n${fence}\n\n## assistant\nBoth ran.\n`,
);

async function start(db: string) {
  return createServer({
    port: 0,
    check: 'off',
    file: toolFile,
    db,
    logLevel: 'silent',
    chat: { models: [`replay:${transcript}`], modelOptions: { tokensPerSecond: 0 } },
  });
}

describe('manual-run conversations (autorun false)', () => {
  it('nothing runs until the run signal; the loop continues once every block has run', async () => {
    const db = join(dir, 'manual.db');
    let server = await start(db);
    let conversationId: string;
    try {
      const client = await openJsonSocket(server.wsUrl);
      const started = await client.request({ type: 'chat.start', message: 'go', autorun: false });
      expect(started.result.conversation).toMatchObject({ autorun: false, running: true });
      conversationId = started.result.conversation.conversationId;
      const intents = [
        await client.waitFor((m) => m.type === 'intent' && m.index === 0),
        await client.waitFor((m) => m.type === 'intent' && m.index === 1),
      ];
      const [first, second] = intents.map((intent) => intent.pid as number);
      await sleep(500);
      const events = () => client.messages.filter((m) => m.type === 'process' || m.type.startsWith('chat.'));
      // Both processes were created idle, unrun; no step has ended.
      expect(events().filter((m) => m.type === 'process')).toEqual([
        expect.objectContaining({ pid: first, state: 'idle', status: null, runs: 0 }),
        expect.objectContaining({ pid: second, state: 'idle', status: null, runs: 0 }),
      ]);
      expect(client.messages.some((m) => m.type === 'chat.step' || m.type === 'stream.result')).toBe(false);

      // Running the second block alone does not end the step.
      expect(await client.request({ type: 'process.signal', pid: second, signal: 'run' })).toMatchObject({
        type: 'reply',
      });
      await client.waitFor((m) => m.type === 'process' && m.pid === second && m.status === 'success');
      await sleep(300);
      expect(client.messages.some((m) => m.type === 'chat.step')).toBe(false);

      await client.request({ type: 'process.signal', pid: first, signal: 'run' });
      const step = await client.waitFor((m) => m.type === 'chat.step' && m.step === 1);
      expect(step.results.text).toContain('first');
      expect(step.results.text).toContain('second');
      expect(await client.waitFor((m) => m.type === 'chat.done')).toMatchObject({
        reason: 'answered',
        steps: 2,
      });
      client.close();
    } finally {
      await server.close();
    }
    // The setting is stored with the conversation.
    server = await start(db);
    try {
      const client = await openJsonSocket(server.wsUrl);
      const got = await client.request({ type: 'chat.get', conversationId });
      expect(got.result.conversation).toMatchObject({ conversationId, autorun: false, running: false });
      client.close();
    } finally {
      await server.close();
    }
  });

  it('a turn waiting for the run signal ends canceled on chat.cancel, its blocks left unrun', async () => {
    await using server = await start(':memory:');
    const client = await openJsonSocket(server.wsUrl);
    const dones = () => client.messages.filter((m) => m.type === 'chat.done');
    const started = await client.request({ type: 'chat.start', message: 'go', autorun: false });
    const { conversationId } = started.result.conversation;
    const intent = await client.waitFor((m) => m.type === 'intent' && m.index === 1);
    await client.request({ type: 'chat.cancel', conversationId });
    expect(await client.waitFor((m) => m.type === 'chat.done')).toMatchObject({ reason: 'canceled' });
    expect(await client.request({ type: 'process.get', pid: intent.pid })).toMatchObject({
      result: { process: { state: 'idle', status: null, runs: 0 } },
    });
    // A later turn without autorun keeps the conversation's setting (the replay's next answer has no block).
    const again = await client.request({ type: 'chat.start', conversationId, message: 'again' });
    expect(again.result.conversation.autorun).toBe(false);
    await expect.poll(() => dones().length).toBe(2);
    expect(dones()[1]).toMatchObject({ reason: 'answered' });
    client.close();
  });
});
