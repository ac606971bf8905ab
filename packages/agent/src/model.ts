import type { ChatUsage } from '@mci/protocol';

/** A picture sent to a model: its `image/*` media type and its bytes in base64. */
export interface ModelImage {
  mimeType: string;
  data: string;
}

/**
 * One message of the conversation as sent to a model (the system prompt goes apart). `images` (user
 * messages holding results) go after the text as the provider's image parts, to models that take
 * them ({@link ChatModel.acceptsImages}).
 */
export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
  images?: readonly ModelImage[];
}

/** One model request: the system prompt, the conversation so far, and where the tokens go. */
export interface ModelRequest {
  system: string;
  messages: readonly ModelMessage[];
  /** Called with each piece of the answer as it arrives, in order. */
  onToken(text: string): void;
  /** Aborts the request (the promise then rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** A finished answer: its whole text, the provider's token counts, and why it stopped. */
export interface ModelAnswer {
  text: string;
  /** Absent when the provider reported none. */
  usage?: ChatUsage;
  /** The provider's finish reason as given (`stop`, `length`, `end_turn`, `max_tokens`, ...). */
  finishReason?: string;
}

/**
 * A chat model that streams its answers: made by `createModel('provider:model')`, or implemented by
 * hand for another API.
 */
export interface ChatModel {
  /** `provider:model`. */
  readonly name: string;
  readonly provider: string;
  readonly model: string;
  /** The endpoint requests go to (no credentials), for messages; absent for local models. */
  readonly endpoint?: string;
  /**
   * Whether the model takes image input: the loop then sends the pictures of run results to it, else
   * a note saying they were left out. Absent: false.
   */
  readonly acceptsImages?: boolean;
  /** Tokens the model can hold (prompt plus answer): the loop's context budget. */
  readonly contextWindow: number;
  /**
   * The secret values this model is reached with (its API key, credentials in its endpoint URL), each
   * named by the variable it comes from: a server redacts them from everything it stores or sends.
   */
  readonly secrets?: ReadonlyArray<{ name: string; value: string }>;
  /**
   * Streams one answer.
   * @throws ModelError naming the provider, model and HTTP status (never a key); the signal's reason
   * when aborted.
   */
  stream(request: ModelRequest): Promise<ModelAnswer>;
}
