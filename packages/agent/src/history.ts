import type { ModelImage, ModelMessage } from './model.ts';

/**
 * A stored message: what the person wrote, what the model answered, or the results sent back (with
 * the pictures sent to the model, if kept).
 */
export interface HistoryMessage {
  role: 'user' | 'assistant' | 'results';
  text: string;
  images?: readonly ModelImage[];
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
    const images = role === 'user' && message.images?.length ? message.images : undefined;
    if (previous?.role === role) {
      previous.content = `${previous.content}\n\n${message.text}`;
      if (images) previous.images = [...(previous.images ?? []), ...images];
    } else out.push({ role, content: message.text, ...(images && { images }) });
  }
  return out;
}
