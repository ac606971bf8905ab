import { buildSystemPrompt, type ChatModel, createModel, type ModelOptions } from '@mci/agent';
import type { Redactor } from '@mci/schema';
import type { Logger } from 'pino';
import { ConfigError } from '../config/config-error.ts';
import type { ProcessManager } from '../processes/process-manager-types.ts';
import {
  DEFAULT_RETENTION_MAX_AGE_MS,
  DEFAULT_RETENTION_MAX_BYTES,
  type RetentionOptions,
  sweepEvery,
} from '../store/retention.ts';
import { renderSandboxGlobals, type ToolDeclarationSource } from '../tools-dts/sandbox-globals-dts.ts';
import { ChatService } from './chat-service.ts';
import type { ConversationStore } from './conversation-store.ts';

/**
 * The chat settings of the server (`mci serve --model`, `--model-url`, `--system`, `--max-steps`,
 * `--tool-prompt-budget`).
 */
export interface ChatSettings {
  /** Models, `provider:model`, the first the default. Keys come from the server's environment. */
  models?: readonly string[];
  /** Options of every model (`baseURL` from `--model-url`, retries, context window). */
  modelOptions?: ModelOptions;
  /** A system prompt to use instead of the generated one. */
  system?: string;
  /** Most model requests per turn. @default 8 */
  maxSteps?: number;
  /** Most estimated tokens the tools take in the generated system prompt. @default 8000 */
  toolPromptBudget?: number;
}

/**
 * Builds the server's {@link ChatService}: its models, the system prompt from the tools' declarations
 * (the text of `GET /tools.d.ts`), and its conversation store.
 * @throws ModelError for a bad model name, a missing key, or an unreadable replay transcript.
 */
export async function createChatService(options: {
  settings: ChatSettings;
  manager: ProcessManager;
  tools: readonly ToolDeclarationSource[];
  conversations: ConversationStore;
  logger?: Logger;
  /** Takes the models' keys (and every other secret value) out of messages and events. */
  redactor?: Redactor;
  /** A principal's saved skills as declarations, added to the system prompt of its turns. */
  skillDeclarations?: (owner: string) => Promise<string>;
}): Promise<ChatService> {
  const { settings, logger, redactor } = options;
  const models: ChatModel[] = [];
  for (const name of settings.models ?? []) {
    const model = await createModel(name, settings.modelOptions);
    try {
      redactor?.add(model.secrets ?? []);
    } catch (error) {
      throw new ConfigError('CONFIG_INVALID', `model ${name}: ${(error as Error).message}`, {
        path: 'model',
      });
    }
    models.push(model);
  }
  const prompt = buildSystemPrompt({
    toolsDts: renderSandboxGlobals(options.tools),
    ...(settings.toolPromptBudget !== undefined && { toolPromptBudget: settings.toolPromptBudget }),
  });
  if (models.length > 0) {
    logger?.info(
      { models: models.map((model) => model.name), systemPromptBytes: prompt.report.bytes },
      'hosting conversations',
    );
  }
  return new ChatService({
    manager: options.manager,
    store: options.conversations,
    models,
    system: settings.system ?? prompt.text,
    ...(options.skillDeclarations && { skillDeclarations: options.skillDeclarations }),
    ...(settings.maxSteps !== undefined && { maxSteps: settings.maxSteps }),
    ...(logger && { logger }),
    ...(redactor && { redactor }),
  });
}

/**
 * Runs the conversations' retention (see `ChatService.sweep`) with the processes' settings: the same
 * age and bytes per principal, at the same interval. `false`: none.
 */
export function startConversationRetention(
  chat: ChatService,
  options: RetentionOptions | false | undefined,
  logger: Logger,
): { stop(): void } | undefined {
  if (options === false) return undefined;
  return sweepEvery(
    options?.intervalMs,
    () =>
      chat.sweep({
        maxAgeMs: options?.maxAgeMs ?? DEFAULT_RETENTION_MAX_AGE_MS,
        maxBytes: options?.maxBytes ?? DEFAULT_RETENTION_MAX_BYTES,
      }),
    (error) => logger.error({ err: error }, 'conversation retention failed'),
  );
}
