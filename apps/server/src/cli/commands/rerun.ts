import { defineCommand } from '../command.ts';
import { addRemoteOptions, type RemoteOptions, runRemote } from '../remote.ts';
import { signalEach } from '../signal-each.ts';

interface RerunOptions extends RemoteOptions {
  wait?: boolean;
  force?: boolean;
}

/**
 * `mci rerun PID... [--wait] [--force]`: the run signal to each (idle) process, which queues a new
 * run; prints each one's state (with `--wait`, once the run has finished; exit 1 unless every run
 * succeeded). `--force` sends the run signal with `force: true`.
 */
export default defineCommand<RerunOptions, [pids: string[]]>({
  configure(command) {
    command
      .argument('<pid...>', 'process ids')
      .option('-w, --wait', 'wait for each run to finish; exit 1 unless all succeeded')
      .option('--force', 'send the run signal with force: true (the MCI process API flag)');
    addRemoteOptions(command);
  },
  run({ args: [pids], options }, io) {
    return runRemote('rerun', options, io, (client) =>
      signalEach(client, io, 'rerun', 'run', pids, {
        wait: options.wait === true,
        requireSuccess: options.wait === true,
        force: options.force === true,
      }),
    );
  },
});
