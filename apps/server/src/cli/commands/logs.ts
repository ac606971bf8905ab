import type { MciClient, ProcessSnapshot, RunSnapshot } from '@mci/client';
import { Option } from 'commander';
import { formatCall } from '../call-format.ts';
import { defineCommand } from '../command.ts';
import type { CliIo } from '../io.ts';
import { numberOption } from '../options.ts';
import { describeProcess, formatDuration, printEvent } from '../process-format.ts';
import { createProgress } from '../progress.ts';
import { addRemoteOptions, EXIT, parsePids, type RemoteOptions, runRemote } from '../remote.ts';

interface LogsOptions extends RemoteOptions {
  follow?: boolean;
  run?: number;
  calls?: boolean;
}

/**
 * `mci logs PID [--run N] [--follow]`: a run's outputs (`[output] JSON` lines) and console text
 * (stdout to stdout, stderr to stderr), then, for a run that did not succeed, its status and error on
 * stderr. `--follow` streams a run in progress live, in order, until it finishes (then a status line
 * on stderr). Exit 0 when the run succeeded or is still going, 1 when it failed, timed out or was
 * canceled (as `submit --wait`), or when the server refused. `--calls` prints the run's tool calls and
 * fetches instead (the audit, one line each, every page; see `formatCall`), exit 0.
 */
export default defineCommand<LogsOptions, [pid: string]>({
  configure(command) {
    command
      .argument('<pid>', 'process id')
      .option('-f, --follow', 'stream a running process live until it finishes')
      .option('--calls', "print the run's tool calls and fetches (input, outcome, duration, decision)")
      .addOption(new Option('--run <n>', 'which run (from 1)').argParser(numberOption('--run')));
    addRemoteOptions(command);
  },
  run({ args: [pidArg], options }, io) {
    return runRemote('logs', options, io, async (client) => {
      const [pid] = parsePids([pidArg]) as [number];
      const snapshot = await client.get(pid);
      const run = options.run ?? snapshot.run;
      if (run === 0) {
        io.stderr.write(`pid ${pid} has not run yet\n`);
        return EXIT.OK;
      }
      if (options.calls) return printCalls(client, io, pid, run);
      const live = run === snapshot.run && snapshot.state !== 'idle';
      if (options.follow && live) return follow(client, io, pid, run);
      const record = await client.getRun(pid, run);
      printRun(record, io);
      return outcome(record, io, pid);
    });
  },
});

/** Prints every call of run `run`, a page at a time. */
async function printCalls(client: MciClient, io: CliIo, pid: number, run: number): Promise<number> {
  let cursor: string | undefined;
  let count = 0;
  do {
    const page = await client.listCalls(pid, run, { limit: 100, ...(cursor !== undefined && { cursor }) });
    for (const call of page.items) io.stdout.write(`${formatCall(call)}\n`);
    count += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  if (count === 0) io.stderr.write(`pid ${pid} run ${run} made no tool calls or fetches\n`);
  return EXIT.OK;
}

function printRun(run: RunSnapshot, io: CliIo): void {
  for (const value of run.outputs) io.stdout.write(`[output] ${JSON.stringify(value) ?? 'undefined'}\n`);
  io.stdout.write(run.stdout);
  io.stderr.write(run.stderr);
  if (run.truncated) io.stderr.write('[outputs or logs of this run were truncated by the sandbox limits]\n');
}

/** Prints the status and error of a run that ended without success; its exit code. */
function outcome(run: RunSnapshot, io: CliIo, pid: number): number {
  if (run.status === null || run.status === 'success') return EXIT.OK;
  const error = run.error
    ? `: ${run.error.name}: ${run.error.message}${run.error.line ? ` (line ${run.error.line})` : ''}`
    : '';
  io.stderr.write(`pid ${pid} run ${run.run}: ${run.status}${error}\n`);
  return EXIT.FAILED;
}

/** Replays the run from the server's event history, then follows it live until it is idle. */
async function follow(client: MciClient, io: CliIo, pid: number, run: number): Promise<number> {
  const progress = createProgress(io.stderr);
  const started = Date.now();
  let final: ProcessSnapshot | undefined;
  try {
    for await (const event of client.events(pid)) {
      if ('run' in event && event.run !== run) continue;
      if (event.type === 'process') {
        if (event.state === 'idle') {
          progress.stop();
          final = event;
          io.stderr.write(`${describeProcess(event)}\n`);
        } else {
          const elapsed = progress.live ? ` ${formatDuration(Date.now() - started)}` : '';
          progress.update(`pid ${pid} run ${run}: ${event.state}${elapsed}`);
        }
      } else printEvent(event, io, (text, to) => progress.line(text, to));
    }
  } finally {
    progress.stop();
  }
  return final === undefined || final.status === 'success' ? EXIT.OK : EXIT.FAILED;
}
