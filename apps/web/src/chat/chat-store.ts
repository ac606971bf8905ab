import type { ChatEvent, ChatMessage, MciClient, ServerEvent, Subscription } from '@mci/client';

/** A step of a running turn: the model's answer so far and the processes its exec blocks created. */
export interface LiveStep {
  step: number;
  streamId: string;
  text: string;
  /** Pid of each exec block by its index in the answer (from the stream's `intent` events). */
  pids: Array<number | undefined>;
}

/** What the console knows of one conversation's turn beyond its stored messages. */
export interface TurnState {
  running: boolean;
  /** Steps still being written (a finished step becomes a stored message). */
  steps: LiveStep[];
  /** Messages stored by the turn so far (from `chat.step`), in order. */
  stored: ChatMessage[];
  /** Why the turn stopped, once it did. */
  stopped?: string;
  error?: string;
}

const IDLE: TurnState = { running: false, steps: [], stored: [] };

/**
 * The chat turns of one client, kept outside React so a page change does not lose them: it listens
 * to `chat.*` events and follows each step's stream (`subscribe {streamId}` from the seq the turn
 * started at) to learn which process each exec block became.
 */
export class ChatStore {
  readonly #client: MciClient;
  readonly #turns = new Map<string, TurnState>();
  readonly #streams = new Map<string, Subscription>();
  readonly #since = new Map<string, number>();
  readonly #listeners = new Set<() => void>();
  /** The stream each stored answer was written into (its live step's key). */
  readonly #streamOf = new Map<number, string>();
  #version = 0;

  constructor(client: MciClient) {
    this.#client = client;
    client.chat.onEvent((event) => this.#apply(event));
  }

  /** The turn of `conversationId` (idle when none ran here). */
  turn(conversationId: string | undefined): TurnState {
    return (conversationId === undefined ? undefined : this.#turns.get(conversationId)) ?? IDLE;
  }

  readonly version = (): number => this.#version;

  /** The stream stored message `messageId` was written into, when this client saw it live. */
  streamOf(messageId: number): string | undefined {
    return this.#streamOf.get(messageId);
  }

  readonly listen = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /**
   * Sends `message` (a new conversation without `conversationId`) and returns the conversation id.
   * @throws ClientError from `chat.start`
   */
  async send(
    message: string,
    options: { conversationId?: string; model?: string; autorun?: boolean },
  ): Promise<string> {
    const since = this.#client.seq;
    const reply = await this.#client.chat.start(message, options);
    const id = reply.conversation.conversationId;
    this.#since.set(id, since);
    this.#update(id, () => ({ running: true, steps: [], stored: [reply.message] }));
    return id;
  }

  /** Cancels the running turn of `conversationId`. */
  async stop(conversationId: string): Promise<void> {
    await this.#client.chat.cancel(conversationId);
  }

  #apply(event: ChatEvent): void {
    const id = event.conversationId;
    switch (event.type) {
      case 'chat.token':
        this.#update(id, (turn) => {
          const existing = turn.steps.find((step) => step.step === event.step);
          if (existing === undefined) this.#follow(id, event.streamId, event.step);
          const steps = existing
            ? turn.steps.map((step) => (step === existing ? { ...step, text: step.text + event.text } : step))
            : [...turn.steps, { step: event.step, streamId: event.streamId, text: event.text, pids: [] }];
          return { ...turn, running: true, steps };
        });
        return;
      case 'chat.step':
        this.#streamOf.set(event.message.id, event.streamId);
        this.#streams.get(event.streamId)?.close();
        this.#streams.delete(event.streamId);
        this.#update(id, (turn) => ({
          ...turn,
          steps: turn.steps.filter((step) => step.step !== event.step),
          stored: [...turn.stored, event.message, ...(event.results ? [event.results] : [])],
        }));
        return;
      case 'chat.done':
        this.#update(id, (turn) => ({ ...turn, running: false, steps: [], stopped: event.reason }));
        return;
      case 'chat.error':
        this.#update(id, (turn) => ({
          ...turn,
          running: false,
          steps: [],
          error: `${event.code}: ${event.message}`,
        }));
        return;
    }
  }

  /** Follows the stream of a step to map its exec blocks to processes. */
  #follow(conversationId: string, streamId: string, step: number): void {
    if (this.#streams.has(streamId)) return;
    const onEvent = (event: ServerEvent) => {
      if (event.type !== 'intent' || event.pid === undefined) return;
      const pid = event.pid;
      this.#update(conversationId, (turn) => ({
        ...turn,
        steps: turn.steps.map((live) => {
          if (live.step !== step) return live;
          const pids = [...live.pids];
          pids[event.index] = pid;
          return { ...live, pids };
        }),
      }));
    };
    const since = this.#since.get(conversationId) ?? this.#client.seq;
    this.#streams.set(streamId, this.#client.subscribe({ streamId }, { since, onEvent }));
  }

  #update(conversationId: string, change: (turn: TurnState) => TurnState): void {
    this.#turns.set(conversationId, change(this.turn(conversationId)));
    this.#version++;
    for (const listener of this.#listeners) listener();
  }
}

const stores = new WeakMap<MciClient, ChatStore>();

/** The chat store of `client` (one per client). */
export function chatStoreOf(client: MciClient): ChatStore {
  let store = stores.get(client);
  if (store === undefined) {
    store = new ChatStore(client);
    stores.set(client, store);
  }
  return store;
}
