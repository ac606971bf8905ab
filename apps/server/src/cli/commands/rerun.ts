import type { Command } from 'commander';
import { addRemoteOptions, type RemoteOptions, runRemote } from '../remote.ts';
import { signalEach } from '../signal-each.ts';
import type { RegisterCommand } from './index.ts';

/**
 * `mci rerun PID... [--wait]`: the run signal to each (idle) process, which queues a new run; prints
 * each one's state (with `--wait`, once the run has finished; exit 1 unless every run succeeded).
 */
export const registerRerun: RegisterCommand = (program: Command) => {
  const command = program
    .command('rerun')
    .description('run idle processes again (a new run each; earlier runs stay readable)')
    .argument('<pid...>', 'process ids')
    .option('--wait', 'wait for each run to finish; exit 1 unless all succeeded');
  addRemoteOptions(command).action((pids: string[], options: RemoteOptions & { wait?: boolean }) =>
    runRemote('rerun', options, (client) =>
      signalEach(client, 'rerun', 'run', pids, {
        wait: options.wait === true,
        requireSuccess: options.wait === true,
      }),
    ),
  );
};
