import { type ChatStopReason, type ChatUsage, imagesIn, type ServerEvent } from '@mci/protocol';
import type { AgentEvent } from './agent-events.ts';
import type { ChatModel, ModelAnswer, ModelImage, ModelMessage } from './model.ts';
import { ModelError } from './model-error.ts';
import { streamTraced } from './model-span.ts';
import { imagesForModel } from './result-images.ts';
import type { StreamHost, TurnStream, TurnStreamResult } from './stream-host.ts';

/** The prefix of the message that hands a step's response pipe back to the model. */
export const RESULTS_PREFIX = 'Results of your code:\n\n';

/** A message the turn added to the conversation: an answer, or the results sent back. */
export type TurnMessage =
  | { role: 'assistant'; text: string; step: number; pids: number[]; usage?: ChatUsage }
  | { role: 'results'; text: string; step: number; pids: number[]; images?: ModelImage[] };

/** Options of {@link runTurn}. */
export interface TurnOptions {
  /** Runs the blocks: an `MciClient`, or anything with its `openStream` and `signal`. */
  host: StreamHost;
  model: ChatModel;
  /** The system prompt (see `buildSystemPrompt`). */
  system: string;
  /** The conversation so far, ending with the user's new message. */
  messages: readonly ModelMessage[];
  /** Most model requests in this turn. @default 8 */
  maxSteps?: number;
  /** Tokens the conversation may reach before the loop stops. @default the model's `contextWindow` */
  contextBudget?: number;
  /** Label of the processes the turn creates (a message id, say). */
  ref?: string;
  /**
   * `false`: each block waits for a `run` signal (the user's Run button), and the loop waits until
   * every block of an answer has run and ended (or the turn is canceled) before sending the results
   * back. Needs a host that supports it (the server's own). @default true
   */
  autorun?: boolean;
  /** Cancels the turn: the model request is aborted and the turn's processes are killed. */
  signal?: AbortSignal;
  /** Every event of the turn, in order. */
  onEvent?: (event: AgentEvent) => void;
  /** Each message as the turn adds it (to store it); a step's messages come before its `step` event. */
  onMessage?: (message: TurnMessage) => void;
}

/** How a turn ended (also sent as the `done` event). */
export interface TurnResult {
  reason: ChatStopReason;
  steps: number;
  usage: ChatUsage;
  /** The last answer of the model. */
  answer: string;
  /** The messages the turn added, in order. */
  messages: TurnMessage[];
}

/**
 * Runs one turn of the agent loop. Each step streams the model's answer into a new MCI stream token
 * by token (so blocks start while the model is still writing), ends the stream, waits for its
 * `stream.result` (with `autorun: false`, once the user has run every block) and sends the response pipe back as a user message starting with
 * {@link RESULTS_PREFIX}, with the pictures of the step's outputs as image parts when the model takes
 * images ({@link ChatModel.acceptsImages}), else a note saying they were left out. The loop stops when an answer has no exec block (`answered`), after
 * `maxSteps` requests (`max-steps`), on abort (`canceled`; running processes are killed), or when
 * the next request would pass the context budget (`context-budget`, counted from the provider's usage).
 * @throws ModelError when the model fails (after an `error` event); `SERVER_ERROR` as a ModelError-like
 * `Error` with `code` when the server fails the stream.
 */
export async function runTurn(options: TurnOptions): Promise<TurnResult> {
  const { host, model, system, signal } = options;
  const maxSteps = options.maxSteps ?? 8;
  const budget = options.contextBudget ?? model.contextWindow;
  const emit = options.onEvent ?? (() => {});
  const messages: ModelMessage[] = [...options.messages];
  const added: TurnMessage[] = [];
  const usage: ChatUsage = { inputTokens: 0, outputTokens: 0 };
  let lastAnswer = '';
  let lastUsage: ChatUsage | undefined;

  const add = (message: TurnMessage) => {
    added.push(message);
    options.onMessage?.(message);
  };
  const finish = (reason: ChatStopReason, steps: number): TurnResult => {
    emit({ type: 'done', reason, steps, usage: { ...usage }, answer: lastAnswer });
    return { reason, steps, usage, answer: lastAnswer, messages: added };
  };

  for (let step = 1; ; step++) {
    if (signal?.aborted) return finish('canceled', step - 1);
    if (estimateContext(system, messages, lastUsage) > budget) return finish('context-budget', step - 1);

    const pids: number[] = [];
    const images: ModelImage[] = [];
    let intents = 0;
    const stream = host.openStream({
      ...(options.ref !== undefined && { ref: options.ref }),
      ...(options.autorun === false && { autorun: false }),
      onEvent: (event: ServerEvent) => {
        if (event.type === 'intent') {
          intents++;
          if (event.pid !== undefined) pids.push(event.pid);
        } else if (event.type === 'output' && pids.includes(event.pid)) images.push(...imagesIn(event.value));
        emit(event);
      },
    });
    let answer: ModelAnswer;
    let partial = '';
    try {
      answer = await streamTraced(model, {
        system,
        messages,
        ...(signal && { signal }),
        onToken: (text) => {
          partial += text;
          stream.write(text);
          emit({ type: 'token', step, streamId: stream.streamId, text });
        },
      });
    } catch (error) {
      await stopStream(host, stream, pids);
      if (partial) add({ role: 'assistant', text: partial, step, pids: [...pids] });
      lastAnswer = partial;
      if (signal?.aborted) return finish('canceled', step);
      throw reportError(emit, error);
    }
    lastAnswer = answer.text;
    if (answer.usage) {
      usage.inputTokens += answer.usage.inputTokens;
      usage.outputTokens += answer.usage.outputTokens;
      lastUsage = answer.usage;
    } else lastUsage = undefined;

    let result: TurnStreamResult;
    try {
      await stream.end();
      result = await untilAborted(stream.result, signal);
    } catch (error) {
      const aborted = signal?.aborted === true;
      if (aborted) await stopStream(host, stream, pids);
      add({
        role: 'assistant',
        text: answer.text,
        step,
        pids: [...pids],
        ...(answer.usage && { usage: answer.usage }),
      });
      if (aborted) return finish('canceled', step);
      throw reportError(
        emit,
        Object.assign(new Error(`running the blocks failed: ${(error as Error).message}`), {
          code: 'SERVER_ERROR',
        }),
      );
    }
    const ran = result.processes.map((process) => process.pid);
    add({
      role: 'assistant',
      text: answer.text,
      step,
      pids: ran,
      ...(answer.usage && { usage: answer.usage }),
    });
    messages.push({ role: 'assistant', content: answer.text });
    const last = intents === 0 || step >= maxSteps;
    const { sent, note } = imagesForModel(images, model.acceptsImages === true);
    const results = `${RESULTS_PREFIX}${result.text}${note}`;
    if (!last) {
      add({ role: 'results', text: results, step, pids: ran, ...(sent.length > 0 && { images: sent }) });
      messages.push({ role: 'user', content: results, ...(sent.length > 0 && { images: sent }) });
    }
    emit({
      type: 'step',
      step,
      streamId: stream.streamId,
      text: answer.text,
      pids: ran,
      ...(answer.usage && { usage: answer.usage }),
      ...(answer.finishReason && { finishReason: answer.finishReason }),
      ...(!last && { results }),
    });
    if (intents === 0) return finish('answered', step);
    if (step >= maxSteps) return finish('max-steps', step);
  }
}

/**
 * Tokens the next request would hold: the last request's counted prompt and answer plus an estimate
 * of what was added since (4 characters a token), or an estimate of everything when no usage is known.
 */
function estimateContext(
  system: string,
  messages: readonly ModelMessage[],
  last: ChatUsage | undefined,
): number {
  const chars = (list: readonly ModelMessage[]) => list.reduce((n, message) => n + message.content.length, 0);
  if (!last) return Math.ceil((system.length + chars(messages)) / 4);
  // The last request's prompt and answer are counted; only the results message after them is not.
  const tail = messages.at(-1);
  return (
    last.inputTokens + last.outputTokens + Math.ceil((tail?.role === 'user' ? tail.content.length : 0) / 4)
  );
}

/**
 * Ends an interrupted stream, stops waiting for blocks not run yet and kills what it started, then
 * waits for it to settle.
 */
async function stopStream(host: StreamHost, stream: TurnStream, pids: readonly number[]): Promise<void> {
  await stream.end().catch(() => {});
  stream.stopWaiting?.();
  // Idle processes answer CONFLICT: nothing to kill there.
  await Promise.all(pids.map((pid) => host.signal(pid, 'kill').catch(() => {})));
  await stream.result.catch(() => {});
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function reportError(emit: (event: AgentEvent) => void, error: unknown): Error {
  const model = error instanceof ModelError ? error : undefined;
  const code = model?.code ?? (error as { code?: string }).code ?? 'SERVER_ERROR';
  emit({
    type: 'error',
    code,
    message: (error as Error).message,
    ...(model?.provider !== undefined && { provider: model.provider }),
    ...(model?.model !== undefined && { model: model.model }),
    ...(model?.status !== undefined && { status: model.status }),
  });
  return error instanceof Error ? error : new Error(String(error));
}
