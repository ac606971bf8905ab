import type { AgentEvent } from './agent-events.ts';
import { createModel, type ModelOptions } from './create-model.ts';
import { type HistoryMessage, toModelMessages } from './history.ts';
import type { ChatModel } from './model.ts';
import { runTurn, type TurnResult } from './run-turn.ts';
import type { StreamHost } from './stream-host.ts';
import { buildSystemPrompt, fetchToolDeclarations, type SystemPrompt } from './system-prompt.ts';

/** Options of {@link Agent}. */
export interface AgentOptions {
  /** Runs the blocks: an `MciClient` (`connect(url)`), or anything with its `openStream` and `signal`. */
  host: StreamHost;
  model: ChatModel;
  /** The system prompt (see `buildSystemPrompt`). */
  system: string;
  /** The size report of a generated system prompt, for display. */
  prompt?: SystemPrompt;
  /** Most model requests per turn. @default 8 */
  maxSteps?: number;
  /** Tokens the conversation may reach. @default the model's context window */
  contextBudget?: number;
  /** Every event of every turn. */
  onEvent?: (event: AgentEvent) => void;
}

/**
 * A conversation with a model whose exec blocks run on an MCI server: {@link Agent.send} runs one
 * turn of the loop (see `runTurn`) and keeps the history for the next.
 */
export class Agent {
  readonly model: ChatModel;
  readonly system: string;
  /** The generated system prompt with its size report, when it was generated. */
  readonly prompt: SystemPrompt | undefined;
  /** The conversation so far: user messages, answers and the results sent back. */
  readonly history: HistoryMessage[] = [];
  readonly #options: AgentOptions;

  constructor(options: AgentOptions) {
    this.#options = options;
    this.model = options.model;
    this.system = options.system;
    this.prompt = options.prompt;
  }

  /**
   * Sends a user message and runs the loop until the model answers without a block, `maxSteps`,
   * the context budget, or `signal` (then running processes are killed and the reason is `canceled`).
   * @throws ModelError when the model fails; the history keeps what the turn added before.
   */
  async send(
    text: string,
    options: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void } = {},
  ): Promise<TurnResult> {
    this.history.push({ role: 'user', text });
    const { host, model, system, maxSteps, contextBudget } = this.#options;
    return runTurn({
      host,
      model,
      system,
      messages: toModelMessages(this.history),
      ...(maxSteps !== undefined && { maxSteps }),
      ...(contextBudget !== undefined && { contextBudget }),
      ...(options.signal && { signal: options.signal }),
      onEvent: (event) => {
        this.#options.onEvent?.(event);
        options.onEvent?.(event);
      },
      onMessage: (message) =>
        this.history.push({
          role: message.role,
          text: message.text,
          ...(message.role === 'results' && message.images && { images: message.images }),
        }),
    });
  }
}

/** Options of {@link createAgent}. */
export interface CreateAgentOptions extends ModelOptions {
  /** A connected `MciClient` (or another {@link StreamHost} with an `httpUrl`). */
  client: StreamHost & { readonly httpUrl: string };
  /** `provider:model`, or a model made by hand. */
  model: string | ChatModel;
  /** The server's API token, for `GET /tools.d.ts`. */
  token?: string;
  /** A system prompt to use instead of the generated one. */
  system?: string;
  /** Most estimated tokens the tools take in the generated prompt. @default DEFAULT_TOOL_PROMPT_BUDGET */
  toolPromptBudget?: number;
  maxSteps?: number;
  contextBudget?: number;
  onEvent?: (event: AgentEvent) => void;
}

/**
 * Makes an {@link Agent} for a server: the model from its name, the system prompt from the server's
 * tool declarations (`GET /tools.d.ts`) unless `system` is given.
 * @throws ModelError for a bad model name or a missing key; Error when the declarations cannot be read;
 * RangeError for a `toolPromptBudget` that is not a positive integer.
 */
export async function createAgent(options: CreateAgentOptions): Promise<Agent> {
  const { client, token, system, toolPromptBudget, maxSteps, contextBudget, onEvent, ...modelOptions } =
    options;
  const model =
    typeof options.model === 'string' ? await createModel(options.model, modelOptions) : options.model;
  const prompt =
    system === undefined
      ? buildSystemPrompt({
          toolsDts: await fetchToolDeclarations(client.httpUrl, token ? { token } : {}),
          ...(toolPromptBudget !== undefined && { toolPromptBudget }),
        })
      : undefined;
  return new Agent({
    host: client,
    model,
    system: system ?? prompt?.text ?? '',
    ...(prompt && { prompt }),
    ...(maxSteps !== undefined && { maxSteps }),
    ...(contextBudget !== undefined && { contextBudget }),
    ...(onEvent && { onEvent }),
  });
}
