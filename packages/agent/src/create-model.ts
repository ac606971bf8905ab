import { resolve } from 'node:path';
import { secretsOfUrl } from '@mci/schema';
import { createAnthropicModel } from './anthropic-model.ts';
import type { ChatModel } from './model.ts';
import { ModelError } from './model-error.ts';
import { createOpenAiModel } from './openai-model.ts';
import { parseModelName } from './providers.ts';
import { createReplayModel } from './replay-model.ts';

/** Options of {@link createModel}. */
export interface ModelOptions {
  /**
   * The endpoint (`--model-url`). @default the provider's `*_BASE_URL` variable (`OPENAI_BASE_URL`,
   * `ANTHROPIC_BASE_URL`), else the provider's own endpoint
   */
  baseURL?: string;
  /** The API key. @default from the provider's variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `MCI_MODEL_API_KEY`) */
  apiKey?: string;
  /** Where keys and endpoints are read. @default process.env */
  env?: Record<string, string | undefined>;
  /** Retries of rate limits (429), overloads and 5xx, with the SDKs' backoff. @default 2 */
  maxRetries?: number;
  /** Tokens the model holds, the loop's context budget. @default per provider (128k OpenAI, 200k Anthropic, 32k Ollama) */
  contextWindow?: number;
  /**
   * Whether the model takes image input (pictures of run results are sent to it).
   * @default true for `openai:` and `anthropic:`, false for the others (many of their models read text only)
   */
  images?: boolean;
  /** Cap on each answer's tokens. @default the provider's (8192 for Anthropic, which needs one) */
  maxOutputTokens?: number;
  /** Replay models: tokens played per second, 0 for no pauses. @default `MCI_REPLAY_RATE`, else 40 */
  tokensPerSecond?: number;
  /** Replay models: the directory a relative transcript path is read from. @default process.cwd() */
  cwd?: string;
}

/**
 * Makes the model named `provider:model`: `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
 * `ollama:qwen3` (OpenAI API at `http://127.0.0.1:11434/v1`), `openrouter:`, `groq:`, `together:`
 * (keys from `MCI_MODEL_API_KEY`), `replay:FILE` (a markdown transcript).
 *
 * The endpoint is `options.baseURL`, else the SDK's standard variable, else the provider's default.
 * @throws ModelError `BAD_MODEL`, `MISSING_KEY` (naming the variable to set), `TRANSCRIPT`.
 */
export async function createModel(name: string, options: ModelOptions = {}): Promise<ChatModel> {
  const { provider, model, spec } = parseModelName(name);
  const env = options.env ?? process.env;
  const read = (variable: string | undefined) => (variable ? env[variable] || undefined : undefined);
  if (spec.api === 'replay') {
    const rate = options.tokensPerSecond ?? numberOr(read('MCI_REPLAY_RATE'), undefined);
    return createReplayModel({
      file: resolve(options.cwd ?? process.cwd(), model),
      name: model,
      ...(rate !== undefined && { tokensPerSecond: rate }),
    });
  }
  const keyEnv = options.apiKey ? undefined : spec.keyEnv.find((variable) => read(variable) !== undefined);
  const apiKey = options.apiKey || read(keyEnv);
  if (!apiKey && !spec.keyOptional) {
    throw new ModelError(
      'MISSING_KEY',
      `${provider} model ${model} needs an API key: set ${spec.keyEnv.join(' or ')}`,
      { provider, model },
    );
  }
  const baseURL = options.baseURL || read(spec.baseURLEnv) || spec.defaultBaseURL || '';
  const urlName = options.baseURL ? 'MODEL_URL' : read(spec.baseURLEnv) ? spec.baseURLEnv! : 'MODEL_URL';
  const secrets = [
    ...(apiKey ? [{ name: keyEnv ?? 'MODEL_API_KEY', value: apiKey }] : []),
    ...secretsOfUrl(baseURL, urlName),
  ];
  const common = {
    provider,
    model,
    baseURL,
    contextWindow: options.contextWindow ?? spec.contextWindow,
    acceptsImages: options.images ?? spec.images,
    maxRetries: options.maxRetries ?? 2,
    secrets,
    ...(options.maxOutputTokens !== undefined && { maxOutputTokens: options.maxOutputTokens }),
  };
  if (spec.api === 'anthropic') return createAnthropicModel({ ...common, apiKey: apiKey ?? '' });
  return createOpenAiModel({ ...common, apiKey });
}

function numberOr(text: string | undefined, fallback: number | undefined): number | undefined {
  const n = Number(text);
  return text !== undefined && Number.isFinite(n) && n >= 0 ? n : fallback;
}
