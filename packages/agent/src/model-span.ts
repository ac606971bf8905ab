import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import type { ChatModel, ModelAnswer, ModelRequest } from './model.ts';

// OpenTelemetry GenAI client span attributes (incubating: copied, as their maintainers advise).
// @see https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/#inference
const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';

const tracer = trace.getTracer('@mci/agent');

/** Where a model is reached (no credentials: the endpoint never has them), as span attributes. */
function serverOf(endpoint: string | undefined): Record<string, string | number> {
  if (endpoint === undefined) return {};
  try {
    const url = new URL(endpoint);
    return {
      [ATTR_SERVER_ADDRESS]: url.hostname,
      [ATTR_SERVER_PORT]: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    };
  } catch {
    return {};
  }
}

/**
 * `model.stream(request)` in an OpenTelemetry client span `chat MODEL` (the GenAI inference span):
 * provider, requested model, and once answered its token usage and finish reason. Neither the
 * prompt nor the answer is recorded. A no-op span without a started SDK.
 * @throws what `model.stream` throws (the span records its `code` or name as `error.type`).
 */
export async function streamTraced(model: ChatModel, request: ModelRequest): Promise<ModelAnswer> {
  return tracer.startActiveSpan(
    `chat ${model.model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
        [ATTR_GEN_AI_PROVIDER_NAME]: model.provider,
        [ATTR_GEN_AI_REQUEST_MODEL]: model.model,
        ...serverOf(model.endpoint),
      },
    },
    async (span) => {
      try {
        const answer = await model.stream(request);
        if (answer.usage) {
          span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, answer.usage.inputTokens);
          span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, answer.usage.outputTokens);
        }
        if (answer.finishReason !== undefined)
          span.setAttribute(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [answer.finishReason]);
        return answer;
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        span.setAttribute(
          ATTR_ERROR_TYPE,
          typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error',
        );
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
