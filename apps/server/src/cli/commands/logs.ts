import type { MciClient, RunSnapshot } from '@mci/client';
import { type Command, Option } from 'commander';
import { describeProcess, formatDuration, printEvent } from '../process-format.ts';
import { createProgress } from '../progress.ts';
import {
  addRemoteOptions,
  EXIT,
  parsePids,
  positiveInteger,
  type RemoteOptions,
  runRemote,
} from '../remote.ts';
import type { RegisterCommand } from './index.ts';

interface LogsOptions extends RemoteOptions {
  follow?: boolean;
  run?: number;
}

/**
 * `mci logs PID [--run N] [--follow]`: a run's outputs (`[output] JSON` lines) and console text
 * (stdout to stdout, stderr to stderr); `--follow` streams a run in progress live, in order, until it
 * finishes (then a status line on stderr).
 */
export const registerLogs: RegisterCommand = (program: Command) => {
  const command = program
    .command('logs')
    .description("print a process's outputs and stdout/stderr (latest run unless --run)")
    .argument('<pid>', 'process id')
    .option('-f, --follow', 'stream a running process live until it finishes')
    .addOption(new Option('--run <n>', 'which run (from 1)').argParser(positiveInteger('--run')));
  addRemoteOptions(command).action((pidArg: string, options: LogsOptions) =>
    runRemote('logs', options, async (client) => {
      const [pid] = parsePids([pidArg]) as [number];
      const snapshot = await client.get(pid);
      const run = options.run ?? snapshot.run;
      if (run === 0) {
        process.stderr.write(`pid ${pid} has not run yet\n`);
        return EXIT.OK;
      }
      const live = run === snapshot.run && snapshot.state !== 'idle';
      if (options.follow && live) return follow(client, pid, run);
      printRun(await client.getRun(pid, run));
      return EXIT.OK;
    }),
  );
};

function printRun(run: RunSnapshot): void {
  for (const value of run.outputs) process.stdout.write(`[output] ${JSON.stringify(value) ?? 'undefined'}\n`);
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.truncated)
    process.stderr.write('[outputs or logs of this run were truncated by the sandbox limits]\n');
}

/** Replays the run from the server's event history, then follows it live until it is idle. */
async function follow(client: MciClient, pid: number, run: number): Promise<number> {
  const progress = createProgress();
  const started = Date.now();
  try {
    for await (const event of client.events(pid)) {
      if ('run' in event && event.run !== run) continue;
      if (event.type === 'process') {
        if (event.state === 'idle') {
          progress.stop();
          process.stderr.write(`${describeProcess(event)}\n`);
        } else {
          const elapsed = progress.live ? ` ${formatDuration(Date.now() - started)}` : '';
          progress.update(`pid ${pid} run ${run}: ${event.state}${elapsed}`);
        }
      } else printEvent(event, (text, to) => progress.line(text, to));
    }
  } finally {
    progress.stop();
  }
  return EXIT.OK;
}
