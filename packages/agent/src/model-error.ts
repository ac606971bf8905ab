/**
 * Codes of {@link ModelError}: `MODEL_ERROR` (the provider answered with an HTTP error, after the
 * SDK's retries), `MODEL_UNREACHABLE` (no answer: refused, reset, timed out), `MISSING_KEY` (no API
 * key in the environment), `BAD_MODEL` (a model name that is not `provider:model`, or an unknown
 * provider), `TRANSCRIPT` (a replay transcript that cannot be read).
 */
export type ModelErrorCode = 'MODEL_ERROR' | 'MODEL_UNREACHABLE' | 'MISSING_KEY' | 'BAD_MODEL' | 'TRANSCRIPT';

/**
 * A model could not answer. The message names the provider, the model and, for HTTP errors, the
 * status; it never holds an API key (keys are cut out of whatever the provider said).
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly code: ModelErrorCode;
  readonly provider: string | undefined;
  readonly model: string | undefined;
  /** The HTTP status of the provider's answer, for `MODEL_ERROR`. */
  readonly status: number | undefined;

  constructor(
    code: ModelErrorCode,
    message: string,
    options: { provider?: string; model?: string; status?: number } = {},
  ) {
    super(message);
    this.code = code;
    this.provider = options.provider;
    this.model = options.model;
    this.status = options.status;
  }
}

/** What an SDK error looks like (both SDKs' `APIError` classes have these fields). */
interface SdkError {
  status?: number;
  message?: string;
  name?: string;
  cause?: unknown;
}

/**
 * Turns an error of the `openai` or `@anthropic-ai/sdk` client into a {@link ModelError} for `model`,
 * with every secret in `secrets` (and anything shaped like a key) cut out of the message.
 */
export function toModelError(
  error: unknown,
  model: { provider: string; model: string; endpoint?: string },
  secrets: readonly string[],
): ModelError {
  if (error instanceof ModelError) return error;
  const sdk = (typeof error === 'object' && error !== null ? error : {}) as SdkError;
  const who = `${model.provider} model ${model.model}`;
  const where = model.endpoint ? ` at ${model.endpoint}` : '';
  const said = redact(firstLine(sdk.message ?? String(error)), secrets);
  const named = { provider: model.provider, model: model.model };
  if (typeof sdk.status === 'number') {
    return new ModelError('MODEL_ERROR', `${who}${where} answered HTTP ${sdk.status}: ${said}`, {
      ...named,
      status: sdk.status,
    });
  }
  const cause = sdk.cause instanceof Error ? ` (${redact(firstLine(sdk.cause.message), secrets)})` : '';
  return new ModelError('MODEL_UNREACHABLE', `${who}${where} could not be reached: ${said}${cause}`, named);
}

// Provider key formats (OpenAI `sk-...`, Anthropic `sk-ant-...`, OpenRouter `sk-or-...`, Groq
// `gsk_...`), also when a provider echoes a key back partly masked (`sk-abc***xyz`).
const KEY_SHAPES = /\b(?:sk|gsk|xai|pk)[-_][A-Za-z0-9*_-]{6,}/g;

/** `text` with each of `secrets` and every key-shaped word replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out.replace(KEY_SHAPES, '[redacted]');
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]?.slice(0, 500) ?? '';
}
