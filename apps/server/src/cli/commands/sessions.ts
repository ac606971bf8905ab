import type { Session } from '@mci/protocol';
import { defineCommand } from '../command.ts';
import { addRemoteOptions, EXIT, type RemoteOptions, runRemote } from '../remote.ts';

interface SessionsOptions extends RemoteOptions {
  json?: boolean;
}

/** One line per session: id, owner, created and last used. */
function sessionLine(session: Session): string {
  return `${session.id}  ${session.owner}  created ${session.createdAt}  used ${session.updatedAt}`;
}

/**
 * `mci sessions [ID]`: the sessions this token may see, newest first, one per line (`--json`: JSON
 * lines); with an id, that session's processes and state keys (docs/sessions.md).
 */
export default defineCommand<SessionsOptions, [id: string | undefined]>({
  configure(command) {
    command
      .argument('[id]', 'show this session: its processes and state keys')
      .option('--json', 'JSON output (one object per line for the list)');
    addRemoteOptions(command);
  },
  run({ args: [id], options }, io) {
    return runRemote('sessions', options, io, async (client) => {
      if (id !== undefined) {
        const session = await client.sessions.get(id);
        if (options.json) {
          io.stdout.write(`${JSON.stringify(session)}\n`);
          return EXIT.OK;
        }
        io.stdout.write(`${sessionLine(session)}\n`);
        for (const process of session.processes)
          io.stdout.write(`  pid ${process.pid}  ${process.state}  ${process.status ?? '-'}\n`);
        for (const entry of session.state)
          io.stdout.write(
            `  state ${entry.key}  ${entry.bytes} B  v${entry.version}${entry.expiresAt ? `  expires ${entry.expiresAt}` : ''}\n`,
          );
        return EXIT.OK;
      }
      let cursor: string | undefined;
      let shown = 0;
      do {
        const page = await client.sessions.list({ limit: 100, ...(cursor !== undefined && { cursor }) });
        for (const session of page.items)
          io.stdout.write(`${options.json ? JSON.stringify(session) : sessionLine(session)}\n`);
        shown += page.items.length;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      if (shown === 0 && !options.json) io.stderr.write('no sessions\n');
      return EXIT.OK;
    });
  },
});
