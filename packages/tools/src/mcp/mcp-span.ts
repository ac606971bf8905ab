import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';

// OpenTelemetry MCP client span attributes (incubating: copied, as their maintainers advise).
// @see https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/
const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';

const tracer = trace.getTracer('@mci/tools');

/** The span of one MCP `tools/call` and the `_meta` that carries its context to the server. */
export interface McpCallSpan {
  span: Span;
  /** `traceparent` (and `tracestate`) for the request's `params._meta`; empty when tracing is off. */
  meta: Record<string, string>;
}

/**
 * Starts the client span of an MCP `tools/call` (`tools/call NAME`, kind client) under the active
 * span, with the W3C trace context for the request's `params._meta`, where the MCP server reads it.
 * @see https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/#context-propagation
 */
export function startMcpCallSpan(toolName: string, serverName: string): McpCallSpan {
  const span = tracer.startSpan(`tools/call ${toolName}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_MCP_METHOD_NAME]: 'tools/call',
      [ATTR_GEN_AI_TOOL_NAME]: toolName,
      [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
      'mci.mcp.server': serverName,
    },
  });
  const meta: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), meta);
  return { span, meta };
}

/** Ends an MCP call's span: `error.type` `tool_error` for an `isError` result, else the error's name. */
export function endMcpCallSpan(span: Span, error?: string): void {
  if (error !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
