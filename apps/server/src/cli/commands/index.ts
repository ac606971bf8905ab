import type { Command } from 'commander';
import { registerChat } from './chat.ts';
import { registerEnvs } from './envs.ts';
import { registerExec } from './exec.ts';
import { registerExtract } from './extract.ts';
import { registerKill } from './kill.ts';
import { registerList } from './list.ts';
import { registerLogs } from './logs.ts';
import { registerMcp } from './mcp.ts';
import { registerPs } from './ps.ts';
import { registerRerun } from './rerun.ts';
import { registerRun } from './run.ts';
import { registerServe } from './serve.ts';
import { registerSubmit } from './submit.ts';
import { registerValidate } from './validate.ts';

/** A command module registers one `mci` sub-command on the program. */
export type RegisterCommand = (program: Command) => void;

// One line per command; keep them in the order `mci --help` should show them.
export const commands: RegisterCommand[] = [
  registerValidate,
  registerList,
  registerExec,
  registerRun,
  registerEnvs,
  registerExtract,
  registerServe,
  registerMcp,
  registerPs,
  registerLogs,
  registerKill,
  registerRerun,
  registerSubmit,
  registerChat,
];
