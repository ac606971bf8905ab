import type { Approval, ApprovalState } from '@mci/client';
import { Option } from 'commander';
import { defineCommand } from '../command.ts';
import { numberOption } from '../options.ts';
import { addRemoteOptions, EXIT, type RemoteOptions, runRemote } from '../remote.ts';

interface ApprovalsOptions extends RemoteOptions {
  state?: ApprovalState;
  pid?: number;
  all?: boolean;
  limit?: number;
  json?: boolean;
}

/** One line per approval: id, state, pid, what it asks for, and who decided. */
export function approvalLine(approval: Approval): string {
  const what =
    approval.kind === 'tool'
      ? `${approval.tool}(${approval.input === undefined ? '' : JSON.stringify(approval.input)})`
      : `${approval.method} ${approval.url}`;
  const decided = approval.decidedBy === undefined ? '' : ` by ${approval.decidedBy}`;
  const reason = approval.reason === undefined ? '' : `: ${approval.reason}`;
  const until = approval.state === 'pending' ? ` (expires ${approval.expiresAt})` : `${decided}${reason}`;
  return `${approval.id}  ${approval.state.padEnd(8)}  pid ${approval.pid}  ${what}${until}`;
}

/**
 * `mci approvals`: the approvals this token may see (pending ones by default), newest first, one per
 * line, or as JSON lines with `--json` (docs/approvals.md).
 */
export default defineCommand<ApprovalsOptions>({
  configure(command) {
    command
      .addOption(
        new Option('--state <state>', 'only this state (default: pending)').choices([
          'pending',
          'approved',
          'denied',
          'expired',
          'canceled',
        ]),
      )
      .option('--all', 'every state')
      .addOption(
        new Option('--pid <pid>', 'only the approvals of this process').argParser(numberOption('--pid')),
      )
      .addOption(
        new Option('--limit <n>', 'only the newest n approvals (default: all)').argParser(
          numberOption('--limit'),
        ),
      )
      .option('--json', 'one JSON object per line');
    addRemoteOptions(command);
  },
  run({ options }, io) {
    return runRemote('approvals', options, io, async (client) => {
      const { pid, limit } = options;
      const state = options.all ? undefined : (options.state ?? 'pending');
      let cursor: string | undefined;
      let shown = 0;
      do {
        const page = await client.listApprovals({
          ...(state !== undefined && { state }),
          ...(pid !== undefined && { pid }),
          ...(cursor !== undefined && { cursor }),
          limit: Math.min(limit === undefined ? 100 : limit - shown, 100),
        });
        for (const approval of page.items)
          io.stdout.write(`${options.json ? JSON.stringify(approval) : approvalLine(approval)}\n`);
        shown += page.items.length;
        cursor = shown === limit ? undefined : page.nextCursor;
      } while (cursor !== undefined);
      if (shown === 0 && !options.json) io.stderr.write(`no ${state ?? ''} approvals\n`.replace('  ', ' '));
      return EXIT.OK;
    });
  },
});
