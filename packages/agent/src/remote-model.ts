import { withoutCredentials } from '@mci/schema';
import type { ChatModel, ModelAnswer, ModelRequest } from './model.ts';
import { toModelError } from './model-error.ts';

/** Settings every model behind a provider's HTTP API has (resolved by `createModel`). */
export interface RemoteModelSettings {
  provider: string;
  model: string;
  baseURL: string;
  contextWindow: number;
  /** Whether the model takes image input (see {@link ChatModel.acceptsImages}). */
  acceptsImages: boolean;
  /** The secret values of {@link ChatModel.secrets}. */
  secrets: ReadonlyArray<{ name: string; value: string }>;
  /** Retries of the answers the provider's SDK retries and of connection errors, with the SDK's backoff. */
  maxRetries: number;
}

/**
 * A {@link ChatModel} named `provider:model` whose `stream` calls `streamAnswer`. A throw of
 * `streamAnswer` becomes the request signal's reason when the request was aborted, else a
 * `ModelError` with every secret cut out (see `toModelError`).
 */
export function remoteModel(
  settings: RemoteModelSettings,
  streamAnswer: (request: ModelRequest) => Promise<ModelAnswer>,
): ChatModel {
  const secrets = settings.secrets.map(({ value }) => value);
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
    acceptsImages: settings.acceptsImages,
    async stream(request: ModelRequest): Promise<ModelAnswer> {
      try {
        return await streamAnswer(request);
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        throw toModelError(error, info, secrets);
      }
    },
  };
}
