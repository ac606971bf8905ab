import { defineCommand } from '../command.ts';
import { addRemoteOptions, EXIT, type RemoteOptions, runRemote } from '../remote.ts';
import { approvalLine } from './approvals.ts';

/**
 * `mci approve ID...` and `mci deny ID... [--reason TEXT]`: decides pending approvals; their processes
 * resume (docs/approvals.md). Prints each approval as decided; exit 1 when any was not pending or not
 * found.
 */
export function decideCommand(decision: 'approve' | 'deny') {
  return defineCommand<RemoteOptions & { reason?: string }, [ids: string[]]>({
    configure(command) {
      command.argument('<id...>', 'approval ids (see mci approvals)').option('--reason <text>', 'why');
      addRemoteOptions(command);
    },
    run({ args: [ids], options }, io) {
      return runRemote(decision, options, io, async (client) => {
        let code: number = EXIT.OK;
        for (const id of ids) {
          try {
            const reason = options.reason === undefined ? {} : { reason: options.reason };
            const decided =
              decision === 'approve' ? await client.approve(id, reason) : await client.deny(id, reason);
            io.stdout.write(`${approvalLine(decided)}\n`);
          } catch (error) {
            io.stderr.write(`mci ${decision}: ${id}: ${(error as Error).message}\n`);
            code = EXIT.FAILED;
          }
        }
        return code;
      });
    },
  });
}

export default decideCommand('approve');
