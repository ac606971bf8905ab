import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type {
  ExecutionResult,
  FetchGate,
  FetchRequestData,
  FetchResponseData,
  FetchSendOptions,
  ToolCatalog,
  ToolHost,
  ToolResult,
} from '@mci/sandbox';
import type { Redactor } from '@mci/schema';
import {
  ATTR_ERROR_CODE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_STATUS,
  urlAttribute,
  ATTR_GEN_AI_TOOL_TYPE,
} from './attributes.ts';
import { isTracing } from './start-tracing.ts';
import { traceHeaders } from './trace-context.ts';
import { tracer } from './tracer.ts';

/** The calls of one traced execution, and the end of its span. */
export interface TracedExecution {
  /** The tools, each call in an `execute_tool NAME` span (absent when the run has no tools). */
  tools: ToolHost | undefined;
  /** The fetch gate: each `fetch` in an HTTP client span, sent with `traceparent`. */
  fetchGate: FetchGate;
  /** Ends the execution's span with its result (and the spans of calls that never settled). */
  end(result: ExecutionResult): void;
}

/** W3C Trace Context headers a program may not set itself on a traced `fetch`. */
const TRACE_HEADER = /^trace(?:parent|state)$/i;

/**
 * Traces one sandbox execution of a run: a `mci.sandbox.execute` span under `parent`, the tool
 * calls and fetches of the execution under it. Undefined when tracing is off or the run has no span
 * (the execution then gets its tools and gate as they are).
 *
 * `tools` and `gate` are the run's own (the policy gate, when there is one): a traced call goes
 * through them, so the policy decides and the credentials are added before the `traceparent` header
 * is, and the gate's decision lands on the call's span.
 */
export function traceExecution(
  parent: Context | undefined,
  tools: ToolHost | undefined,
  gate: FetchGate | undefined,
  redactor: Redactor | undefined,
): TracedExecution | undefined {
  if (!parent || !isTracing()) return undefined;
  const span = tracer.startSpan('mci.sandbox.execute', {}, parent);
  const calls = new TracedCalls(trace.setSpan(parent, span), tools, gate, redactor);
  return {
    tools: tools && calls,
    fetchGate: calls,
    end: (result) => {
      calls.abandon();
      span.setAttribute(ATTR_STATUS, result.status);
      span.setAttribute('mci.sandbox.cpu_time_ms', result.cpuTimeMs);
      if (result.status !== 'success') {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: redactor ? redactor.redact(result.error?.message ?? result.status) : result.status,
        });
      }
      span.end();
    },
  };
}

/** The tools and fetches of one execution, each call in its own span under the execution's. */
class TracedCalls implements ToolHost, FetchGate {
  readonly #context: Context;
  readonly #tools: ToolHost | undefined;
  readonly #gate: FetchGate | undefined;
  readonly #redactor: Redactor | undefined;
  /** Calls not settled yet: a call that asks for an approval never settles in this execution. */
  readonly #open = new Set<Span>();

  constructor(
    ctx: Context,
    tools: ToolHost | undefined,
    gate: FetchGate | undefined,
    redactor: Redactor | undefined,
  ) {
    this.#context = ctx;
    this.#tools = tools;
    this.#gate = gate;
    this.#redactor = redactor;
  }

  list(): Array<{ name: string }> {
    return this.#tools?.list() ?? [];
  }

  get catalog(): ToolCatalog | undefined {
    return this.#tools?.catalog;
  }

  execute(name: string, props: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult> {
    const span = this.#start(`execute_tool ${name}`, SpanKind.INTERNAL, {
      [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
      [ATTR_GEN_AI_TOOL_NAME]: name,
      [ATTR_GEN_AI_TOOL_TYPE]: 'function',
    });
    const call = context.with(trace.setSpan(this.#context, span), () =>
      this.#tools!.execute(name, props, options),
    );
    return call.then(
      (result) => {
        if (result?.isError) this.#failed(span, 'tool_error', result.error);
        this.#end(span);
        return result;
      },
      (error: unknown) => {
        this.#threw(span, error);
        throw error;
      },
    );
  }

  fetch(
    request: FetchRequestData,
    send: (options?: FetchSendOptions) => Promise<FetchResponseData>,
  ): Promise<FetchResponseData> {
    const attributes: Record<string, string | number> = { [ATTR_HTTP_REQUEST_METHOD]: request.method };
    const url = URL.parse(request.url);
    if (url) {
      attributes[ATTR_URL_FULL] = urlAttribute(url, this.#redactor);
      attributes[ATTR_SERVER_ADDRESS] = url.hostname;
      attributes[ATTR_SERVER_PORT] = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    }
    const span = this.#start(request.method, SpanKind.CLIENT, attributes);
    const spanContext = trace.setSpan(this.#context, span);
    // After the gate (policy, credentials): the request that leaves carries this span as its parent.
    const traced = (options: FetchSendOptions = {}) => {
      const outgoing = options.request ?? request;
      const headers: Array<[string, string]> = [
        ...outgoing.headers.filter(([header]) => !TRACE_HEADER.test(header)),
        ...Object.entries(traceHeaders(spanContext)),
      ];
      return send({ ...options, request: { ...outgoing, headers } });
    };
    const gate = this.#gate;
    const call = gate ? context.with(spanContext, () => gate.fetch(request, traced)) : traced();
    return call.then(
      (response) => {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.status);
        if (response.status >= 400) this.#failed(span, String(response.status));
        this.#end(span);
        return response;
      },
      (error: unknown) => {
        this.#threw(span, error);
        throw error;
      },
    );
  }

  /** Ends the spans of calls that never settled (a call that asked for an approval). */
  abandon(): void {
    for (const span of this.#open) {
      span.setAttribute('mci.call.settled', false);
      span.end();
    }
    this.#open.clear();
  }

  #start(name: string, kind: SpanKind, attributes: Record<string, string | number>): Span {
    const span = tracer.startSpan(name, { kind, attributes }, this.#context);
    this.#open.add(span);
    return span;
  }

  #end(span: Span): void {
    if (this.#open.delete(span)) span.end();
  }

  #failed(span: Span, type: string, message?: string): void {
    span.setAttribute(ATTR_ERROR_TYPE, type);
    span.setStatus({
      code: SpanStatusCode.ERROR,
      ...(message !== undefined && { message: this.#redact(message) }),
    });
  }

  #threw(span: Span, error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code;
    const type = typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error';
    if (typeof code === 'string') span.setAttribute(ATTR_ERROR_CODE, code);
    this.#failed(span, type, error instanceof Error ? error.message : String(error));
    this.#end(span);
  }

  #redact(text: string): string {
    return this.#redactor ? this.#redactor.redact(text) : text;
  }
}
