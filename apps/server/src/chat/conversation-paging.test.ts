import { describe, expect, it } from 'vitest';
import { ManualPool } from '../../test/support/manual-pool.ts';
import { createProcessManager } from '../processes/process-manager.ts';
import { ChatService } from './chat-service.ts';
import { ConversationStore } from './conversation-store.ts';

// Conversations page (a client reads a long one a page at a time, never all of it at once) and follow
// retention (age, and bytes per principal), over the real SQLite conversation store.

const alice = { id: 'alice', role: 'client' } as const;

async function setup() {
  const store = await ConversationStore.inMemory();
  const manager = await createProcessManager({ pool: new ManualPool(1) });
  const chat = new ChatService({ manager, store, models: [], system: '' });
  return { store, chat };
}

describe('conversation pages and retention', () => {
  it('pages a conversation newest first by count and by bytes, with a cursor to the older page', async () => {
    const { store, chat } = await setup();
    const { conversationId } = await store.create('alice', 'long', 'openai:m');
    for (let i = 1; i <= 250; i++) await store.addMessage({ conversationId, role: 'user', text: `m${i}` });
    const first = await chat.get(alice, conversationId);
    expect(first.messages).toHaveLength(200);
    expect(first.messages[0]!.text).toBe('m51');
    expect(first.messages.at(-1)!.text).toBe('m250');
    expect(first.nextCursor).toBe(first.messages[0]!.id);
    const second = await chat.get(alice, conversationId, { before: first.nextCursor! });
    expect(second.messages.map((m) => m.text)).toEqual(Array.from({ length: 50 }, (_, i) => `m${i + 1}`));
    expect(second.nextCursor).toBeUndefined();

    const big = await store.create('alice', 'big', 'openai:m');
    for (let i = 0; i < 6; i++)
      await store.addMessage({
        conversationId: big.conversationId,
        role: 'user',
        text: 'x'.repeat(1_000_000),
      });
    const page = await chat.get(alice, big.conversationId);
    // 4 MiB of text: four messages of a million characters.
    expect(page.messages).toHaveLength(4);
    expect(page.nextCursor).toBeDefined();
    const rest = await chat.get(alice, big.conversationId, { before: page.nextCursor! });
    expect(rest.messages).toHaveLength(2);
    await expect(chat.get({ id: 'bob', role: 'client' }, conversationId)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it("deletes conversations past the age, and a principal's oldest past its bytes, never another's", async () => {
    const { store, chat } = await setup();
    const make = async (owner: string, title: string, bytes: number) => {
      const { conversationId } = await store.create(owner, title, 'openai:m');
      await store.addMessage({ conversationId, role: 'user', text: 'y'.repeat(bytes) });
      await new Promise((resolve) => setTimeout(resolve, 5));
      return conversationId;
    };
    const a1 = await make('alice', 'a1', 600);
    const b1 = await make('bob', 'b1', 900);
    const a2 = await make('alice', 'a2', 600);
    expect(await chat.sweep({ maxAgeMs: 60_000, maxBytes: 1000 })).toBe(1);
    const left = (await store.sizes()).map((size) => size.conversationId).sort();
    expect(left).toEqual([a2, b1].sort());
    expect(left).not.toContain(a1);
    expect(await chat.sweep({ maxAgeMs: 1, maxBytes: 1000, now: Date.now() + 10_000 })).toBe(2);
    expect(await store.sizes()).toEqual([]);
  });
});
