import { describe, expect, it } from 'vitest';
import { ServerMessageSchema } from './messages.ts';
import { parseClientMessage } from './parse-client-message.ts';

describe('chat.* messages', () => {
  it('reads chat.start with and without a conversation', () => {
    expect(parseClientMessage('{"type":"chat.start","id":1,"message":"hi"}')).toEqual({
      ok: true,
      message: { type: 'chat.start', id: 1, message: 'hi' },
    });
    const parsed = parseClientMessage(
      '{"type":"chat.start","conversationId":"c1","model":"openai:gpt-4.1-mini","message":"go on"}',
    );
    expect(parsed.ok).toBe(true);
  });

  it('names the bad field of a chat request', () => {
    expect(parseClientMessage('{"type":"chat.start","id":"a","message":""}')).toMatchObject({
      ok: false,
      problem: { code: 'VALIDATION', path: 'message', id: 'a' },
    });
    expect(parseClientMessage('{"type":"chat.start","model":"gpt-4","message":"x"}')).toMatchObject({
      ok: false,
      problem: { path: 'model', message: expect.stringContaining('provider:model') },
    });
    expect(parseClientMessage('{"type":"chat.rename","conversationId":"c1","title":"  "}')).toMatchObject({
      ok: false,
      problem: { path: 'title' },
    });
  });

  it('reads turn events and chat replies as server messages', () => {
    const usage = { inputTokens: 10, outputTokens: 3 };
    for (const event of [
      { type: 'chat.token', conversationId: 'c1', step: 1, streamId: 's', text: 'He' },
      { type: 'chat.done', conversationId: 'c1', reason: 'answered', steps: 2, usage },
      { type: 'chat.error', conversationId: 'c1', code: 'MODEL_ERROR', message: 'm', status: 500 },
      { type: 'reply', request: 'chat.cancel', result: { conversationId: 'c1', canceled: false } },
    ]) {
      expect(ServerMessageSchema.parse(event)).toEqual(event);
    }
  });
});
