import { ModelError } from './model-error.ts';

/** How a provider is reached: the API it speaks, its endpoint, its key and its context size. */
export interface ProviderSpec {
  /** The wire API: OpenAI Chat Completions, Anthropic Messages, or a replayed transcript. */
  api: 'openai' | 'anthropic' | 'replay';
  /** The endpoint when none is given. */
  defaultBaseURL?: string;
  /** The SDK's standard variable for another endpoint (honoured after the `baseURL` option). */
  baseURLEnv?: string;
  /** The environment variables holding the key, first set wins. */
  keyEnv: readonly string[];
  /** Whether a request may go without a key (local servers). */
  keyOptional?: boolean;
  /** Tokens of context assumed when the caller gives none. */
  contextWindow: number;
  /** Whether its models take image input unless the caller says otherwise. */
  images: boolean;
}

/**
 * The providers a model name may start with. OpenAI-compatible services other than OpenAI itself
 * take their key from `MCI_MODEL_API_KEY`; `openai:` with a `baseURL` covers any other one (vLLM,
 * LM Studio, llama.cpp's server).
 */
export const PROVIDERS: Readonly<Record<string, ProviderSpec>> = {
  openai: {
    api: 'openai',
    defaultBaseURL: 'https://api.openai.com/v1',
    baseURLEnv: 'OPENAI_BASE_URL',
    keyEnv: ['OPENAI_API_KEY', 'MCI_MODEL_API_KEY'],
    contextWindow: 128_000,
    images: true,
  },
  anthropic: {
    api: 'anthropic',
    defaultBaseURL: 'https://api.anthropic.com',
    baseURLEnv: 'ANTHROPIC_BASE_URL',
    keyEnv: ['ANTHROPIC_API_KEY', 'MCI_MODEL_API_KEY'],
    contextWindow: 200_000,
    images: true,
  },
  ollama: {
    api: 'openai',
    defaultBaseURL: 'http://127.0.0.1:11434/v1',
    keyEnv: ['MCI_MODEL_API_KEY'],
    keyOptional: true,
    contextWindow: 32_768,
    images: false,
  },
  openrouter: {
    api: 'openai',
    defaultBaseURL: 'https://openrouter.ai/api/v1',
    keyEnv: ['MCI_MODEL_API_KEY'],
    contextWindow: 128_000,
    images: false,
  },
  groq: {
    api: 'openai',
    defaultBaseURL: 'https://api.groq.com/openai/v1',
    keyEnv: ['MCI_MODEL_API_KEY'],
    contextWindow: 128_000,
    images: false,
  },
  together: {
    api: 'openai',
    defaultBaseURL: 'https://api.together.xyz/v1',
    keyEnv: ['MCI_MODEL_API_KEY'],
    contextWindow: 128_000,
    images: false,
  },
  replay: { api: 'replay', keyEnv: [], keyOptional: true, contextWindow: 1_000_000, images: false },
};

/** A model name split at its first colon. */
export interface ModelName {
  provider: string;
  model: string;
}

/**
 * Splits `provider:model` (`openai:gpt-4.1-mini`, `ollama:qwen3:8b`, `replay:./demo.md`).
 * @throws ModelError `BAD_MODEL` for a name without a provider or with an unknown one.
 */
export function parseModelName(name: string): ModelName & { spec: ProviderSpec } {
  const colon = name.indexOf(':');
  const provider = colon > 0 ? name.slice(0, colon) : '';
  const model = colon > 0 ? name.slice(colon + 1) : '';
  if (!provider || !model) {
    throw new ModelError(
      'BAD_MODEL',
      `model ${JSON.stringify(name)} is not provider:model (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, ollama:qwen3, replay:FILE)`,
    );
  }
  const spec = PROVIDERS[provider];
  if (!spec) {
    throw new ModelError(
      'BAD_MODEL',
      `unknown provider ${JSON.stringify(provider)} in ${JSON.stringify(name)}; known: ${Object.keys(PROVIDERS).join(', ')}`,
      { provider, model },
    );
  }
  return { provider, model, spec };
}
