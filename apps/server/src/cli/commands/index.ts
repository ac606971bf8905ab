import type { Command } from 'commander';

/** A command module registers one `mci` sub-command on the program. */
export type RegisterCommand = (program: Command) => void;

// One line per command; keep them in the order `mci --help` should show them.
export const commands: RegisterCommand[] = [];
