import { defineCommand } from '../command.ts';
import { addRemoteOptions, type RemoteOptions, runRemote } from '../remote.ts';
import { signalEach } from '../signal-each.ts';

/**
 * `mci kill PID...`: the kill signal to each process; prints each one's state once it has stopped
 * (`--no-wait`: right after the signal). Exit 1 when any kill was refused (already idle, unknown pid).
 */
export default defineCommand<RemoteOptions & { wait: boolean }, [pids: string[]]>({
  configure(command) {
    command
      .argument('<pid...>', 'process ids')
      .option('--no-wait', 'print the state right after the signal instead of once stopped');
    addRemoteOptions(command);
  },
  run({ args: [pids], options }, io) {
    return runRemote('kill', options, io, (client) =>
      signalEach(client, io, 'kill', 'kill', pids, { wait: options.wait, requireSuccess: false }),
    );
  },
});
