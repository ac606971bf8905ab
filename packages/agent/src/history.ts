import type { ModelMessage } from './model.ts';

/** A stored message: what the person wrote, what the model answered, or the results sent back. */
export interface HistoryMessage {
  role: 'user' | 'assistant' | 'results';
  text: string;
}

/**
 * The model's view of a conversation: `results` messages go as user messages, and consecutive
 * messages of one role are joined (a turn stopped at `maxSteps` leaves results before the next user
 * message; Anthropic wants roles to alternate).
 */
export function toModelMessages(history: readonly HistoryMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of history) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const previous = out.at(-1);
    if (previous?.role === role) previous.content = `${previous.content}\n\n${message.text}`;
    else out.push({ role, content: message.text });
  }
  return out;
}
