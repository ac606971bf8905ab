import type { ChatModel, ModelAnswer, ModelRequest } from './model.ts';
import { withoutCredentials } from '@mci/schema';
import { toModelError } from './model-error.ts';

/** Settings of an Anthropic Messages model (resolved by `createModel`). */
export interface AnthropicModelSettings {
  provider: string;
  model: string;
  baseURL: string;
  apiKey: string;
  contextWindow: number;
  /** The secret values of {@link ChatModel.secrets}. */
  secrets: ReadonlyArray<{ name: string; value: string }>;
  /** Retries of 429, 408, 409, 529 and 5xx answers and of connection errors, with the SDK's backoff. */
  maxRetries: number;
  /** `max_tokens` of each request (the API requires one). @default 8192 */
  maxOutputTokens?: number;
}

/**
 * A model behind Anthropic's Messages API, streamed through `@anthropic-ai/sdk`: text deltas become
 * tokens; usage is `message_start`'s input tokens and `message_delta`'s output tokens.
 * The SDK is loaded by the first call, so a server without such a model never loads it.
 * @see https://docs.anthropic.com/en/api/messages-streaming
 */
export async function createAnthropicModel(settings: AnthropicModelSettings): Promise<ChatModel> {
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({
    apiKey: settings.apiKey,
    baseURL: settings.baseURL,
    maxRetries: settings.maxRetries,
  });
  const info = {
    provider: settings.provider,
    model: settings.model,
    endpoint: withoutCredentials(settings.baseURL),
  };
  return {
    name: `${settings.provider}:${settings.model}`,
    provider: settings.provider,
    model: settings.model,
    endpoint: info.endpoint,
    secrets: settings.secrets,
    contextWindow: settings.contextWindow,
    async stream(request: ModelRequest): Promise<ModelAnswer> {
      let text = '';
      let finishReason: string | undefined;
      let inputTokens: number | undefined;
      let outputTokens = 0;
      try {
        const events = await client.messages.create(
          {
            model: settings.model,
            max_tokens: settings.maxOutputTokens ?? 8192,
            system: request.system,
            messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
            stream: true,
          },
          request.signal ? { signal: request.signal } : {},
        );
        for await (const event of events) {
          if (event.type === 'message_start') {
            const usage = event.message.usage;
            // Cached prompt tokens are part of the context too.
            inputTokens =
              usage.input_tokens +
              (usage.cache_read_input_tokens ?? 0) +
              (usage.cache_creation_input_tokens ?? 0);
            outputTokens = usage.output_tokens;
          } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            text += event.delta.text;
            request.onToken(event.delta.text);
          } else if (event.type === 'message_delta') {
            outputTokens = event.usage.output_tokens;
            if (event.delta.stop_reason) finishReason = event.delta.stop_reason;
          }
        }
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        throw toModelError(
          error,
          info,
          settings.secrets.map(({ value }) => value),
        );
      }
      return {
        text,
        ...(inputTokens !== undefined && { usage: { inputTokens, outputTokens } }),
        ...(finishReason && { finishReason }),
      };
    },
  };
}
