import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatModel, ModelAnswer, ModelMessage, ModelRequest } from './model.ts';
import { type RemoteModelSettings, remoteModel } from './remote-model.ts';
import { withImageParts } from './result-images.ts';

/**
 * Settings of an OpenAI Chat Completions model (resolved by `createModel`); `maxRetries` retries 429,
 * 408, 409 and 5xx answers.
 */
export interface OpenAiModelSettings extends RemoteModelSettings {
  /** `undefined` for local servers that need none (a placeholder is sent). */
  apiKey: string | undefined;
  /** Cap on answer tokens (`max_completion_tokens`); the provider's default when absent. */
  maxOutputTokens?: number;
}

/**
 * A model behind OpenAI's Chat Completions API (OpenAI, OpenRouter, Ollama, vLLM, LM Studio, Groq,
 * Together, llama.cpp's server), streamed through the `openai` SDK with usage in the last chunk.
 * The SDK is loaded by the first call, so a server without such a model never loads it.
 * @see https://platform.openai.com/docs/api-reference/chat-streaming
 */
export async function createOpenAiModel(settings: OpenAiModelSettings): Promise<ChatModel> {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({
    apiKey: settings.apiKey ?? 'none',
    baseURL: settings.baseURL,
    maxRetries: settings.maxRetries,
  });
  return remoteModel(settings, async (request: ModelRequest): Promise<ModelAnswer> => {
    let text = '';
    let finishReason: string | undefined;
    let usage: ModelAnswer['usage'];
    const chunks = await client.chat.completions.create(
      {
        model: settings.model,
        messages: [{ role: 'system', content: request.system }, ...request.messages.map(toOpenAiMessage)],
        stream: true,
        stream_options: { include_usage: true },
        ...(settings.maxOutputTokens !== undefined && {
          max_completion_tokens: settings.maxOutputTokens,
        }),
      },
      request.signal ? { signal: request.signal } : {},
    );
    for await (const chunk of chunks) {
      const choice = chunk.choices[0];
      const piece = choice?.delta?.content;
      if (piece) {
        text += piece;
        request.onToken(piece);
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      if (chunk.usage) {
        usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      }
    }
    return { text, ...(usage && { usage }), ...(finishReason && { finishReason }) };
  });
}

/**
 * A message in Chat Completions form: text, or for a user message with pictures, a text part and one
 * `image_url` part per picture (a `data:` URL).
 * @see https://platform.openai.com/docs/guides/images-vision#giving-a-model-images-as-input
 */
function toOpenAiMessage(message: ModelMessage): ChatCompletionMessageParam {
  return withImageParts(message, (image) => ({
    type: 'image_url' as const,
    image_url: { url: `data:${image.mimeType};base64,${image.data}` },
  }));
}
