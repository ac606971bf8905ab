import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatModel, ModelAnswer, ModelMessage, ModelRequest } from './model.ts';
import { type RemoteModelSettings, remoteModel } from './remote-model.ts';
import { withImageParts } from './result-images.ts';

/**
 * Settings of an Anthropic Messages model (resolved by `createModel`); `maxRetries` retries 429, 408,
 * 409, 529 and 5xx answers.
 */
export interface AnthropicModelSettings extends RemoteModelSettings {
  apiKey: string;
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
  return remoteModel(settings, async (request: ModelRequest): Promise<ModelAnswer> => {
    let text = '';
    let finishReason: string | undefined;
    let inputTokens: number | undefined;
    let outputTokens = 0;
    const events = await client.messages.create(
      {
        model: settings.model,
        max_tokens: settings.maxOutputTokens ?? 8192,
        system: request.system,
        messages: request.messages.map(toAnthropicMessage),
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
    return {
      text,
      ...(inputTokens !== undefined && { usage: { inputTokens, outputTokens } }),
      ...(finishReason && { finishReason }),
    };
  });
}

/**
 * A message in Messages API form: text, or for a user message with pictures, a text block and one
 * base64 `image` block per picture.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/vision
 */
function toAnthropicMessage(message: ModelMessage): MessageParam {
  return withImageParts(message, (image) => ({
    type: 'image' as const,
    source: {
      type: 'base64' as const,
      media_type: image.mimeType as 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp',
      data: image.data,
    },
  }));
}
