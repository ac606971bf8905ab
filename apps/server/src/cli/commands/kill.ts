import type { Command } from 'commander';
import { addRemoteOptions, type RemoteOptions, runRemote } from '../remote.ts';
import { signalEach } from '../signal-each.ts';
import type { RegisterCommand } from './index.ts';

/**
 * `mci kill PID...`: the kill signal to each process; prints each one's state once it has stopped
 * (`--no-wait`: right after the signal). Exit 1 when any kill was refused (already idle, unknown pid).
 */
export const registerKill: RegisterCommand = (program: Command) => {
  const command = program
    .command('kill')
    .description('kill processes (queued ones at once, running ones within 100 ms)')
    .argument('<pid...>', 'process ids')
    .option('--no-wait', 'print the state right after the signal instead of once stopped');
  addRemoteOptions(command).action((pids: string[], options: RemoteOptions & { wait: boolean }) =>
    runRemote('kill', options, (client) =>
      signalEach(client, 'kill', 'kill', pids, { wait: options.wait, requireSuccess: false }),
    ),
  );
};
