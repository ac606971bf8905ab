#!/usr/bin/env node
// The `mci` command line. Each command lives in its own module under `commands/` and registers
// itself on the program; this file only assembles them.
import { Command } from 'commander';
import { commands } from './commands/index.ts';

const program = new Command('mci')
  .description('MCI Server: run model-written code in a sandbox, with MCI tools at hand.')
  .showHelpAfterError()
  .enablePositionalOptions();

for (const register of commands) register(program);

await program.parseAsync(process.argv);
