import { type AgentEvent, type ChatModel, ModelError, runTurn, toModelMessages } from '@mci/agent';
import type { ChatEvent, ChatMessage, ChatStartRequest, Conversation, ModelInfo } from '@mci/protocol';
import type { Logger } from 'pino';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import type { ConversationRecord, ConversationStore } from './conversation-store.ts';
import { managerStreamHost } from './manager-stream-host.ts';

/** Options of {@link ChatService}. */
export interface ChatServiceOptions {
  manager: ProcessManager;
  store: ConversationStore;
  /** The configured models; the first is the default. */
  models: readonly ChatModel[];
  /** The system prompt of every turn. */
  system: string;
  /** Most model requests per turn. @default 8 */
  maxSteps?: number;
  logger?: Logger;
}

/** Where one turn's events go: the `chat.*` events, and the id of each stream it opens. */
export interface TurnListener {
  send(event: ChatEvent): void;
  /** A stream of the turn opened (before any of its output): subscribe to its events. */
  stream(streamId: string): void;
}

const TITLE_LENGTH = 60;

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
   * Stores `request.message` and starts a turn in the background; returns the conversation and the
   * stored message at once. The turn's events go to `listener`.
   */
  start(
    principal: Principal,
    request: Pick<ChatStartRequest, 'conversationId' | 'model' | 'message' | 'autorun'>,
    listener: TurnListener,
  ): { conversation: Conversation; message: ChatMessage } {
    if (this.#closed) throw new ServerError('SHUTTING_DOWN', 'the server is shutting down');
    const model = this.#model(request.model);
    const { store } = this.#options;
    let record: ConversationRecord;
    if (request.conversationId === undefined) {
      record = store.create(principal.id, titleOf(request.message), model.name, request.autorun ?? true);
    } else {
      record = this.#visible(principal, request.conversationId);
      if (this.#running.has(record.conversationId)) {
        throw new ServerError('CONFLICT', `conversation ${record.conversationId} has a turn running`, {
          path: 'conversationId',
        });
      }
      if (record.model !== model.name) store.setModel(record.conversationId, model.name);
      if (request.autorun !== undefined && record.autorun !== request.autorun) {
        store.setAutorun(record.conversationId, request.autorun);
      }
    }
    const conversationId = record.conversationId;
    const message = store.addMessage({ conversationId, role: 'user', text: request.message });
    const controller = new AbortController();
    // The turn starts after this returns, so the caller's reply goes out before the turn's first event.
    const done = Promise.resolve()
      .then(() =>
        this.#run(
          principal,
          conversationId,
          model,
          request.autorun ?? record.autorun,
          controller.signal,
          listener,
        ),
      )
      .finally(() => this.#running.delete(conversationId));
    this.#running.set(conversationId, { controller, done });
    return { conversation: this.#summary(this.#visible(principal, conversationId)), message };
  }

  /** Cancels the running turn of a conversation; false when none runs. */
  cancel(principal: Principal, conversationId: string): boolean {
    this.#visible(principal, conversationId);
    const turn = this.#running.get(conversationId);
    turn?.controller.abort(new Error('canceled'));
    return turn !== undefined;
  }

  list(principal: Principal): Conversation[] {
    const owner = principal.role === 'operator' ? undefined : principal.id;
    return this.#options.store.list(owner).map((record) => this.#summary(record));
  }

  get(principal: Principal, conversationId: string): { conversation: Conversation; messages: ChatMessage[] } {
    const record = this.#visible(principal, conversationId);
    return { conversation: this.#summary(record), messages: this.#options.store.messages(conversationId) };
  }

  rename(principal: Principal, conversationId: string, title: string): Conversation {
    this.#visible(principal, conversationId);
    this.#options.store.rename(conversationId, title);
    return this.#summary(this.#visible(principal, conversationId));
  }

  /** Cancels a running turn, waits for it, then deletes the conversation and its messages. */
  async delete(principal: Principal, conversationId: string): Promise<void> {
    this.#visible(principal, conversationId);
    const turn = this.#running.get(conversationId);
    if (turn) {
      turn.controller.abort(new Error('deleted'));
      await turn.done;
    }
    this.#options.store.delete(conversationId);
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

  async #run(
    principal: Principal,
    conversationId: string,
    model: ChatModel,
    autorun: boolean,
    signal: AbortSignal,
    listener: TurnListener,
  ): Promise<void> {
    const { manager, store, system, maxSteps, logger } = this.#options;
    const send = (event: ChatEvent) => {
      try {
        listener.send(event);
      } catch (error) {
        logger?.debug({ err: error }, 'chat: event not delivered');
      }
    };
    const stored = new Map<number, ChatMessage[]>();
    const host = managerStreamHost(manager, principal, (streamId) => listener.stream(streamId), logger);
    let failed: AgentEvent | undefined;
    try {
      const history = store.messages(conversationId);
      await runTurn({
        host,
        model,
        system,
        messages: toModelMessages(history),
        ...(maxSteps !== undefined && { maxSteps }),
        ref: `chat-${conversationId}`,
        autorun,
        signal,
        onMessage: (message) => {
          const saved = store.addMessage({
            conversationId,
            role: message.role,
            text: message.text,
            step: message.step,
            pids: message.pids,
            ...(message.role === 'assistant' && { model: model.name }),
            ...(message.role === 'assistant' && message.usage && { usage: message.usage }),
          });
          stored.set(message.step, [...(stored.get(message.step) ?? []), saved]);
        },
        onEvent: (event) => {
          if (event.type === 'token') {
            send({
              type: 'chat.token',
              conversationId,
              step: event.step,
              streamId: event.streamId,
              text: event.text,
            });
          } else if (event.type === 'step') {
            const [message, results] = stored.get(event.step) ?? [];
            if (!message) return;
            send({
              type: 'chat.step',
              conversationId,
              step: event.step,
              streamId: event.streamId,
              message,
              ...(results && { results }),
            });
          } else if (event.type === 'done') {
            send({
              type: 'chat.done',
              conversationId,
              reason: event.reason,
              steps: event.steps,
              usage: event.usage,
            });
          } else if (event.type === 'error') {
            failed = event;
          }
        },
      });
    } catch (error) {
      const event = failed?.type === 'error' ? failed : undefined;
      const modelError = error instanceof ModelError ? error : undefined;
      logger?.warn(
        { conversationId, model: model.name, code: event?.code, status: modelError?.status },
        `chat turn failed: ${event?.message ?? (error as Error).message}`,
      );
      send({
        type: 'chat.error',
        conversationId,
        code: event?.code ?? 'SERVER_ERROR',
        message: event?.message ?? (error as Error).message,
        provider: model.provider,
        model: model.model,
        ...(modelError?.status !== undefined && { status: modelError.status }),
      });
    }
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

  #visible(principal: Principal, conversationId: string): ConversationRecord {
    const record = this.#options.store.get(conversationId);
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
