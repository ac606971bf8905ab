import type { ChatModel } from '@mci/agent';
import type {
  ChatMessage,
  ChatStartRequest,
  Conversation,
  ModelInfo,
  Page,
  PageRequest,
} from '@mci/protocol';
import { pageBounds, toPage } from '../paging/cursor.ts';
import type { Principal } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import { type ChatTurnSettings, runChatTurn, type TurnListener } from './chat-turn.ts';
import type { ConversationRecord } from './conversation-store.ts';

/** Options of {@link ChatService}: the settings of its turns, and the models they may use. */
export interface ChatServiceOptions extends ChatTurnSettings {
  /** The configured models; the first is the default. */
  models: readonly ChatModel[];
}

const TITLE_LENGTH = 60;

/** Messages of a `chat.get` page without a `limit`. */
export const CHAT_PAGE_MESSAGES = 200;
/** Text of one `chat.get` page (UTF-16 code units; the newest message is always whole). */
export const CHAT_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * Server-hosted conversations: runs the agent loop for a principal on the server's own process
 * manager (keys stay in the server's environment), stores every message, and answers the `chat.*`
 * requests. One turn runs per conversation at a time. Throws {@link ServerError} (`NOT_FOUND` for a
 * conversation the principal cannot see, `CONFLICT`, `VALIDATION`).
 */
export class ChatService {
  readonly #options: ChatServiceOptions;
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  #closed = false;

  constructor(options: ChatServiceOptions) {
    this.#options = options;
  }

  #redact(text: string): string {
    return this.#options.redactor ? this.#options.redactor.redact(text) : text;
  }

  /**
   * Retention of conversations: deletes those not updated for `maxAgeMs`, and, for a principal whose
   * conversations hold more than `maxBytes` of message text, its least recently updated ones until the
   * rest fits (another principal's are never touched). A conversation with a turn running is kept.
   * Returns how many were deleted.
   */
  async sweep(options: { maxAgeMs: number; maxBytes: number; now?: number }): Promise<number> {
    const cutoff = new Date((options.now ?? Date.now()) - options.maxAgeMs).toISOString();
    const byOwner = new Map<string, Array<{ conversationId: string; updatedAt: string; bytes: number }>>();
    for (const size of await this.#options.store.sizes()) {
      const list = byOwner.get(size.owner) ?? [];
      list.push(size);
      byOwner.set(size.owner, list);
    }
    let deleted = 0;
    for (const conversations of byOwner.values()) {
      // Most recently updated first: the oldest go first once the total is past the quota.
      conversations.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
      let kept = 0;
      for (const { conversationId, updatedAt, bytes } of conversations) {
        const running = this.#running.has(conversationId);
        if (!running && (updatedAt < cutoff || kept + bytes > options.maxBytes)) {
          await this.#options.store.delete(conversationId);
          deleted++;
          continue;
        }
        kept += bytes;
      }
    }
    if (deleted > 0) this.#options.logger?.debug({ deleted }, 'conversations deleted by retention');
    return deleted;
  }

  /** The configured models (no keys). */
  models(): ModelInfo[] {
    return this.#options.models.map((model, i) => ({
      name: model.name,
      provider: model.provider,
      model: model.model,
      default: i === 0,
    }));
  }

  /**
   * Stores `request.message` and starts a turn in the background; resolves with the conversation and
   * the stored message. The turn starts on the next turn of the event loop (after the caller has
   * replied); its events go to `listener`.
   * @throws ServerError `SHUTTING_DOWN`, `NOT_FOUND`, `CONFLICT` (a turn of the conversation runs),
   * `VALIDATION` (unknown model).
   */
  async start(
    principal: Principal,
    request: Pick<ChatStartRequest, 'conversationId' | 'model' | 'message' | 'autorun'>,
    listener: TurnListener,
  ): Promise<{ conversation: Conversation; message: ChatMessage }> {
    this.#checkOpen();
    const model = this.#model(request.model);
    const { store } = this.#options;
    const record =
      request.conversationId === undefined
        ? await store.create(
            principal.id,
            titleOf(this.#redact(request.message)),
            model.name,
            request.autorun ?? true,
          )
        : await this.#visible(principal, request.conversationId);
    const conversationId = record.conversationId;
    // Checked and taken in one step (no await between): one turn per conversation.
    this.#checkOpen();
    if (this.#running.has(conversationId)) {
      throw new ServerError('CONFLICT', `conversation ${conversationId} has a turn running`, {
        path: 'conversationId',
      });
    }
    const controller = new AbortController();
    // Resolved with whether the turn runs, once the message is stored and the reply is ready.
    const begin = Promise.withResolvers<boolean>();
    const done = begin.promise
      .then((run) => {
        if (!run) return;
        return runChatTurn({
          ...this.#options,
          principal,
          conversationId,
          model,
          autorun: request.autorun ?? record.autorun,
          signal: controller.signal,
          listener,
        });
      })
      .finally(() => this.#running.delete(conversationId));
    this.#running.set(conversationId, { controller, done });
    try {
      if (record.model !== model.name) await store.setModel(conversationId, model.name);
      if (request.autorun !== undefined && record.autorun !== request.autorun)
        await store.setAutorun(conversationId, request.autorun);
      const message = await store.addMessage({
        conversationId,
        role: 'user',
        text: this.#redact(request.message),
      });
      const conversation = this.#summary(await this.#visible(principal, conversationId));
      setImmediate(() => begin.resolve(true));
      return { conversation, message };
    } catch (error) {
      begin.resolve(false);
      throw error;
    }
  }

  /** Cancels the running turn of a conversation; resolves false when none runs. */
  async cancel(principal: Principal, conversationId: string): Promise<boolean> {
    await this.#visible(principal, conversationId);
    const turn = this.#running.get(conversationId);
    turn?.controller.abort(new Error('canceled'));
    return turn !== undefined;
  }

  /**
   * A page of the conversations `principal` may see (an operator: all), newest first: `limit`
   * (1-100, default 50) after `cursor`, the `nextCursor` of the page before.
   * @throws ServerError `VALIDATION` (a cursor this server did not give, a limit out of range).
   */
  async list(principal: Principal, request: PageRequest = {}): Promise<Page<Conversation>> {
    const { limit, after } = pageBounds(request, ['string', 'string']);
    const owner = principal.role === 'operator' ? undefined : principal.id;
    const records = await this.#options.store.list(owner, {
      limit: limit + 1,
      ...(after !== undefined && { before: [after[0] as string, after[1] as string] as const }),
    });
    const page = toPage(records, limit, (record) => [record.createdAt, record.conversationId]);
    return { ...page, items: page.items.map((record) => this.#summary(record)) };
  }

  /**
   * A conversation and a page of its messages (see `chat.get`): the newest `limit` (default 200)
   * before `before`, at most {@link CHAT_PAGE_BYTES} of text.
   */
  async get(
    principal: Principal,
    conversationId: string,
    page: { limit?: number; before?: number } = {},
  ): Promise<{ conversation: Conversation; messages: ChatMessage[]; nextCursor?: number }> {
    const record = await this.#visible(principal, conversationId);
    const found = await this.#options.store.page(conversationId, {
      limit: page.limit ?? CHAT_PAGE_MESSAGES,
      maxBytes: CHAT_PAGE_BYTES,
      ...(page.before !== undefined && { before: page.before }),
    });
    return { conversation: this.#summary(record), ...found };
  }

  async rename(principal: Principal, conversationId: string, title: string): Promise<Conversation> {
    await this.#visible(principal, conversationId);
    await this.#options.store.rename(conversationId, title);
    return this.#summary(await this.#visible(principal, conversationId));
  }

  /** Cancels a running turn, waits for it, then deletes the conversation and its messages. */
  async delete(principal: Principal, conversationId: string): Promise<void> {
    await this.#visible(principal, conversationId);
    const turn = this.#running.get(conversationId);
    if (turn) {
      turn.controller.abort(new Error('deleted'));
      await turn.done;
    }
    await this.#options.store.delete(conversationId);
  }

  /**
   * Cancels every running turn, waits for them, and closes the conversation store (call before the
   * process manager shuts down). Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const turns = [...this.#running.values()];
    for (const turn of turns) turn.controller.abort(new Error('server shutting down'));
    await Promise.all(turns.map((turn) => turn.done));
    this.#options.store.close();
  }

  #model(name: string | undefined): ChatModel {
    const { models } = this.#options;
    if (models.length === 0) {
      throw new ServerError(
        'CONFLICT',
        'this server has no model: start it with mci serve --model provider:model',
      );
    }
    const model = name === undefined ? models[0] : models.find((candidate) => candidate.name === name);
    if (!model) {
      throw new ServerError(
        'VALIDATION',
        `model ${JSON.stringify(name)} is not configured here; configured: ${models.map((m) => m.name).join(', ')}`,
        { path: 'model' },
      );
    }
    return model;
  }

  #checkOpen(): void {
    if (this.#closed) throw new ServerError('SHUTTING_DOWN', 'the server is shutting down');
  }

  async #visible(principal: Principal, conversationId: string): Promise<ConversationRecord> {
    const record = await this.#options.store.get(conversationId);
    if (!record || (principal.role !== 'operator' && record.owner !== principal.id)) {
      throw new ServerError('NOT_FOUND', `no conversation ${conversationId}`, { path: 'conversationId' });
    }
    return record;
  }

  #summary(record: ConversationRecord): Conversation {
    return { ...record, running: this.#running.has(record.conversationId) };
  }
}

function titleOf(message: string): string {
  const line = message.trim().split('\n', 1)[0] ?? '';
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1)}…` : line || 'New conversation';
}
