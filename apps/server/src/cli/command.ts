import type { Command } from 'commander';
import type { CliIo } from './io.ts';

/** One line of the command index (`commands/index.ts`). */
export interface CommandEntry {
  /** The word after `mci`. */
  readonly name: string;
  /** One line for `mci --help` and `mci NAME --help`. */
  readonly description: string;
  /** Imports the command's module (only when the command runs or shows its own help). */
  load(): Promise<{ default: CommandModule<never, never> }>;
}

/** What a command module exports by default. */
export interface CommandModule<Options = Record<string, unknown>, Args extends unknown[] = unknown[]> {
  /** Declares arguments and options on `command` (its name and description are already set). */
  configure(command: Command): void;
  /**
   * Does the work; resolves with the exit code (2 for a usage error it finds itself, as for those
   * commander reports). An error it throws is printed by `mci` (exit 1).
   */
  run(input: { args: Args; options: Options }, io: CliIo): Promise<number>;
}

/** Types a command module (`export default defineCommand<Options, [file: string]>({ ... })`). */
export function defineCommand<Options, Args extends unknown[] = []>(
  module: CommandModule<Options, Args>,
): CommandModule<Options, Args> {
  return module;
}
