import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, Option } from 'commander';
import type { ChatSettings } from './create-chat-service.ts';

/** The chat flags of `mci serve`. */
export interface ChatFlags {
  model?: string[];
  modelUrl?: string;
  system?: string;
  maxSteps?: number;
}

/** `--model` (repeatable), `--model-url`, `--system`, `--max-steps` for `mci serve`. */
export function chatOptions(): Record<'model' | 'modelUrl' | 'system' | 'maxSteps', Option> {
  return {
    model: new Option(
      '--model <provider:model>',
      'host conversations with this model (repeatable; the first is the default; keys from the environment)',
    ).argParser((value: string, previous: string[] = []) => [...previous, value]),
    modelUrl: new Option(
      '--model-url <url>',
      "the models' endpoint (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's)",
    ),
    system: new Option('--system <file>', 'a system prompt file to use instead of the generated one'),
    maxSteps: new Option('--max-steps <n>', 'most model requests per turn (default 8)').argParser(
      (value: string) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1)
          throw new InvalidArgumentError('--max-steps must be a positive integer');
        return n;
      },
    ),
  };
}

/** The server's chat settings from the flags. @throws Error when `--system` cannot be read. */
export async function chatSettings(flags: ChatFlags): Promise<ChatSettings> {
  return {
    ...(flags.model && { models: flags.model }),
    ...(flags.modelUrl && { modelOptions: { baseURL: flags.modelUrl } }),
    ...(flags.system && { system: await readFile(flags.system, 'utf8') }),
    ...(flags.maxSteps !== undefined && { maxSteps: flags.maxSteps }),
  };
}
