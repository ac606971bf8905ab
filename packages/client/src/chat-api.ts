import type { ChatEvent, ChatMessage, Conversation, ModelInfo, Page, PageRequest } from '@mci/protocol';
import type { Connection } from './connection.ts';

/** Options of {@link ChatApi.start}. */
export interface ChatStartOptions {
  /** Continue this conversation; without it a new one starts. */
  conversationId?: string;
  /** `provider:model` @default the server's default model */
  model?: string;
  /**
   * `false`: each block waits for a `run` signal (`client.signal(pid, 'run')`) and the loop sends the
   * results back once every block has run; kept for the conversation's later turns.
   * @default the conversation's setting; `true` for a new one
   */
  autorun?: boolean;
}

/**
 * Server-hosted conversations (`chat.*` over the same WebSocket): the server runs the model loop, so
 * the caller never holds a model key. A turn's `chat.token`, `chat.step`, `chat.done` and `chat.error`
 * events go to the connection that started it; listen with {@link ChatApi.onEvent}.
 * @see docs/protocol.md
 */
export class ChatApi {
  readonly #connection: Connection;
  readonly #listeners = new Set<(event: ChatEvent) => void>();

  /** @internal Use `client.chat`. */
  constructor(connection: Connection) {
    this.#connection = connection;
  }

  /**
   * Stores `message` as a user message and starts a turn. Resolves at once with the conversation and
   * the stored message; the turn's events follow.
   * @throws ClientError `NOT_FOUND` (unknown conversation), `CONFLICT` (a turn is running), `VALIDATION`
   */
  start(
    message: string,
    options: ChatStartOptions = {},
  ): Promise<{ conversation: Conversation; message: ChatMessage }> {
    return this.#connection.request({ type: 'chat.start', message, ...options });
  }

  /** Cancels the running turn of a conversation; `canceled` is false when none was running. */
  cancel(conversationId: string): Promise<{ conversationId: string; canceled: boolean }> {
    return this.#connection.request({ type: 'chat.cancel', conversationId });
  }

  /**
   * A page of the caller's conversations, newest first (`limit` 1-100, default 50; `cursor`, the
   * `nextCursor` of the page before), and the server's models. `conversations` holds the same items.
   * @throws ClientError `VALIDATION` (a cursor the server did not give, a limit out of range).
   */
  list(
    page: PageRequest = {},
  ): Promise<Page<Conversation> & { conversations: Conversation[]; models: ModelInfo[] }> {
    return this.#connection.request({ type: 'chat.list', ...page }, { retry: true });
  }

  /**
   * One conversation and a page of its messages in order: the newest `limit` (default 200) before
   * `before`; `nextCursor`, when present, is the `before` of the older page.
   * @throws ClientError `NOT_FOUND`
   */
  get(
    conversationId: string,
    page: { limit?: number; before?: number } = {},
  ): Promise<{
    conversation: Conversation;
    messages: ChatMessage[];
    nextCursor?: number;
    models: ModelInfo[];
  }> {
    return this.#connection.request({ type: 'chat.get', conversationId, ...page }, { retry: true });
  }

  /** Renames a conversation. @throws ClientError `NOT_FOUND`, `VALIDATION` */
  async rename(conversationId: string, title: string): Promise<Conversation> {
    return (await this.#connection.request({ type: 'chat.rename', conversationId, title })).conversation;
  }

  /** Deletes a conversation and its messages (its processes stay). @throws ClientError `NOT_FOUND` */
  async delete(conversationId: string): Promise<void> {
    await this.#connection.request({ type: 'chat.delete', conversationId });
  }

  /** Calls `listener` with every chat turn event this connection gets; returns a function that stops it. */
  onEvent(listener: (event: ChatEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** @internal The connection received a chat event. */
  deliver(event: ChatEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
