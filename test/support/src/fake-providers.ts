import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One scripted answer of a fake provider: a streamed answer (its pieces, in order; a promise among
 * them holds the stream until it settles) or an HTTP error.
 */
export type ScriptedReply =
  | {
      chunks: Array<string | Promise<unknown>>;
      usage?: { input: number; output: number };
      finishReason?: string;
    }
  | { status: number; message: string; headers?: Record<string, string> };

/** A request the fake got: path, headers, parsed JSON body, and when it arrived (`performance.now()`). */
export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  at: number;
}

/** A fake provider listening on 127.0.0.1. */
export interface FakeProvider extends AsyncDisposable {
  /** The base URL to give the SDK. */
  url: string;
  requests: RecordedRequest[];
  /** When the last piece of each streamed answer was written (`performance.now()`), in request order. */
  lastTokenAt: number[];
  /** Queues more answers. */
  script(...replies: ScriptedReply[]): void;
  close(): Promise<void>;
}

/** Text answer cut into pieces of `size` characters. */
export function answer(
  text: string,
  options: { size?: number; usage?: { input: number; output: number } } = {},
): ScriptedReply {
  const size = options.size ?? 4;
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return { chunks, usage: options.usage ?? { input: 100, output: Math.ceil(text.length / 4) } };
}

type Wire = 'openai' | 'anthropic';

/** A fake OpenAI Chat Completions server (`POST /v1/chat/completions`, SSE chunks, usage, `[DONE]`). */
export function startFakeOpenAi(...replies: ScriptedReply[]): Promise<FakeProvider> {
  return startFake('openai', replies);
}

/** A fake Anthropic Messages server (`POST /v1/messages`, named SSE events). */
export function startFakeAnthropic(...replies: ScriptedReply[]): Promise<FakeProvider> {
  return startFake('anthropic', replies);
}

/** Each fake provider with its provider name, for `describe.each`: the same cases on both wire formats. */
export const FAKE_PROVIDERS = [
  ['openai', startFakeOpenAi],
  ['anthropic', startFakeAnthropic],
] as const;

async function startFake(wire: Wire, initial: ScriptedReply[]): Promise<FakeProvider> {
  const queue = [...initial];
  const requests: RecordedRequest[] = [];
  const lastTokenAt: number[] = [];
  const server = createServer(async (request, response) => {
    const at = performance.now();
    let raw = '';
    for await (const part of request) raw += part;
    const body = JSON.parse(raw || '{}') as Record<string, unknown>;
    requests.push({ path: request.url ?? '', headers: request.headers, body, at });
    const reply = queue.shift();
    if (!reply) return sendError(wire, response, 500, 'the fake has no scripted answer left');
    if ('status' in reply) return sendError(wire, response, reply.status, reply.message, reply.headers);
    const index = lastTokenAt.length;
    lastTokenAt.push(0);
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const model = String(body.model);
    const events = wire === 'openai' ? openAiEvents(model) : anthropicEvents(model, reply.usage);
    response.write(events.start);
    for (const chunk of reply.chunks) {
      if (typeof chunk !== 'string') {
        await chunk;
        continue;
      }
      if (response.destroyed) return;
      response.write(events.delta(chunk));
      lastTokenAt[index] = performance.now();
    }
    response.end(events.end(reply.finishReason, reply.usage));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: wire === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`,
    requests,
    lastTokenAt,
    script: (...more) => queue.push(...more),
    close,
    [Symbol.asyncDispose]: close,
  };
}

const sse = (data: unknown, event?: string) =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

function openAiEvents(model: string) {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_764_000_000, model };
  const choice = (delta: object, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  return {
    start: sse(choice({ role: 'assistant', content: '' }, null)),
    delta: (text: string) => sse(choice({ content: text }, null)),
    end: (finish = 'stop', usage?: { input: number; output: number }) =>
      sse(choice({}, finish)) +
      (usage
        ? sse({
            ...base,
            choices: [],
            usage: {
              prompt_tokens: usage.input,
              completion_tokens: usage.output,
              total_tokens: usage.input + usage.output,
            },
          })
        : '') +
      'data: [DONE]\n\n',
  };
}

function anthropicEvents(model: string, usage: { input: number; output: number } | undefined) {
  return {
    start:
      sse(
        {
          type: 'message_start',
          message: {
            id: 'msg_fake',
            type: 'message',
            role: 'assistant',
            content: [],
            model,
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: usage?.input ?? 0, output_tokens: 1 },
          },
        },
        'message_start',
      ) +
      sse(
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        'content_block_start',
      ) +
      sse({ type: 'ping' }, 'ping'),
    delta: (text: string) =>
      sse(
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
        'content_block_delta',
      ),
    end: (finish = 'end_turn') =>
      sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop') +
      sse(
        {
          type: 'message_delta',
          delta: { stop_reason: finish, stop_sequence: null },
          usage: { output_tokens: usage?.output ?? 0 },
        },
        'message_delta',
      ) +
      sse({ type: 'message_stop' }, 'message_stop'),
  };
}

function sendError(
  wire: Wire,
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body =
    wire === 'openai'
      ? {
          error: {
            message,
            type: status === 429 ? 'rate_limit_exceeded' : 'server_error',
            param: null,
            code: null,
          },
        }
      : { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message } };
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
