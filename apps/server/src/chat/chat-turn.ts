import { type AgentEvent, type ChatModel, ModelError, runTurn, toModelMessages } from '@mci/agent';
import type { ChatEvent, ChatMessage } from '@mci/protocol';
import type { Redactor } from '@mci/schema';
import type { Logger } from 'pino';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import type { ConversationStore } from './conversation-store.ts';
import { managerStreamHost } from './manager-stream-host.ts';

/** Where one turn's events go: the `chat.*` events, and the id of each stream it opens. */
export interface TurnListener {
  send(event: ChatEvent): void;
  /** A stream of the turn opened (before any of its output): subscribe to its events. */
  stream(streamId: string): void;
}

/** Characters of text per token of a model's context window, for the history a turn reads. */
const CHARS_PER_TOKEN = 4;

/** What every turn of a server's conversations runs with. */
export interface ChatTurnSettings {
  manager: ProcessManager;
  store: ConversationStore;
  /** The system prompt of every turn. */
  system: string;
  /**
   * The declarations of a principal's saved skills (`interface Skills {...}`, '' without any), added
   * to the system prompt of its turns. @default none
   */
  skillDeclarations?: (owner: string) => Promise<string>;
  /** Most model requests per turn. @default 8 */
  maxSteps?: number;
  logger?: Logger;
  /** The server's secret values, taken out of every message stored and event sent. */
  redactor?: Redactor;
}

/** What one turn of a conversation runs with. */
export interface ChatTurnOptions extends ChatTurnSettings {
  principal: Principal;
  conversationId: string;
  model: ChatModel;
  /** Whether the turn's blocks run as they stream; false: each waits for the user to run it. */
  autorun: boolean;
  /** Ends the turn (cancel, delete, shutdown). */
  signal: AbortSignal;
  listener: TurnListener;
}

/**
 * Runs one turn of a conversation: the agent loop over the newest messages the model's context
 * holds, in the conversation's session, on the server's process manager. Stores each message the
 * turn makes and sends its `chat.*` events in order; a turn that fails once the history is read (a
 * model or a store error) ends with a `chat.error` event instead of rejecting.
 */
export async function runChatTurn(options: ChatTurnOptions): Promise<void> {
  const { manager, store, system, maxSteps, logger, redactor } = options;
  const { principal, conversationId, model, autorun, signal, listener } = options;
  const redact = (text: string) => (redactor ? redactor.redact(text) : text);
  const send = (event: ChatEvent) => {
    try {
      listener.send(redactor ? redactor.redactValue(event) : event);
    } catch (error) {
      logger?.debug({ err: error }, 'chat: event not delivered');
    }
  };
  const stored = new Map<number, ChatMessage[]>();
  // Messages are stored and events sent one after another, in the order the turn makes them, so a
  // `chat.step` carries its stored messages. A failed write stops the rest; the turn then fails.
  let queue: Promise<void> = Promise.resolve();
  const later = (work: () => void | Promise<void>) => {
    queue = queue.then(work);
    queue.catch(() => {}); // awaited when the turn ends
  };
  // A conversation is a session: its blocks share one durable `state` (docs/sessions.md).
  const session = await manager.openSession(conversationId, principal);
  const skills = (await options.skillDeclarations?.(principal.id)) ?? '';
  const turnSystem =
    skills === ''
      ? system
      : `${system}\n\nYour saved skills, called as skills.NAME(input) (save more with skills.save):\n\n\`\`\`ts\n${skills}\`\`\``;
  const host = managerStreamHost(
    manager,
    principal,
    (streamId) => listener.stream(streamId),
    logger,
    session,
  );
  let failed: AgentEvent | undefined;
  try {
    // The newest messages the model's context can hold, never the whole history.
    const { messages: history } = await store.page(conversationId, {
      limit: 1000,
      maxBytes: model.contextWindow * CHARS_PER_TOKEN,
    });
    await runTurn({
      host,
      model,
      system: turnSystem,
      messages: toModelMessages(history),
      ...(maxSteps !== undefined && { maxSteps }),
      ref: `chat-${conversationId}`,
      autorun,
      signal,
      onMessage: (message) =>
        later(async () => {
          const saved = await store.addMessage({
            conversationId,
            role: message.role,
            text: redact(message.text),
            step: message.step,
            pids: message.pids,
            ...(message.role === 'assistant' && { model: model.name }),
            ...(message.role === 'assistant' && message.usage && { usage: message.usage }),
          });
          stored.set(message.step, [...(stored.get(message.step) ?? []), saved]);
        }),
      onEvent: (event) => {
        if (event.type === 'token') {
          later(() =>
            send({
              type: 'chat.token',
              conversationId,
              step: event.step,
              streamId: event.streamId,
              text: event.text,
            }),
          );
        } else if (event.type === 'step') {
          later(() => {
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
          });
        } else if (event.type === 'done') {
          later(() =>
            send({
              type: 'chat.done',
              conversationId,
              reason: event.reason,
              steps: event.steps,
              usage: event.usage,
            }),
          );
        } else if (event.type === 'error') {
          failed = event;
        }
      },
    });
    await queue;
  } catch (error) {
    await queue.catch(() => {});
    const event = failed?.type === 'error' ? failed : undefined;
    const modelError = error instanceof ModelError ? error : undefined;
    logger?.warn(
      { conversationId, model: model.name, code: event?.code, status: modelError?.status },
      redact(`chat turn failed: ${event?.message ?? (error as Error).message}`),
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
