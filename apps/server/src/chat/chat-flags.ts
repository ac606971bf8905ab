import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ChatSettings } from './create-chat-service.ts';

/** The chat flags of `mci serve` (declared by the command in `cli/commands/serve.ts`). */
export interface ChatFlags {
  model?: string[];
  modelUrl?: string;
  system?: string;
  maxSteps?: number;
  toolPromptBudget?: number;
}

/**
 * The server's chat settings from the flags (`--system` relative to `cwd`).
 * @throws Error when `--system` cannot be read.
 */
export async function chatSettings(flags: ChatFlags, cwd: string): Promise<ChatSettings> {
  return {
    ...(flags.model && { models: flags.model }),
    ...(flags.modelUrl && { modelOptions: { baseURL: flags.modelUrl } }),
    ...(flags.system && { system: await readFile(resolve(cwd, flags.system), 'utf8') }),
    ...(flags.maxSteps !== undefined && { maxSteps: flags.maxSteps }),
    ...(flags.toolPromptBudget !== undefined && { toolPromptBudget: flags.toolPromptBudget }),
  };
}
