import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { text as readText } from 'node:stream/consumers';
import type { MciClient, ProcessSnapshot } from '@mci/client';
import { defineCommand } from '../command.ts';
import type { CliIo } from '../io.ts';
import { langOption, numberOption } from '../options.ts';
import { describeProcess, formatDuration, printEvent } from '../process-format.ts';
import { createProgress } from '../progress.ts';
import { addRemoteOptions, EXIT, type RemoteOptions, runRemote, UsageError } from '../remote.ts';

interface SubmitOptions extends RemoteOptions {
  wait?: boolean;
  ref?: string;
  session?: string;
  timeout?: number;
  lang?: 'ts' | 'js';
}

/**
 * `mci submit [FILE|-] [--wait] [--timeout MS] [--lang ts|js] [--session ID]`: reads the file (or stdin), then creates a
 * process from it and prints its pid. With `--wait`, streams its outputs and logs until it finishes:
 * exit 0 on success, 1 otherwise. Exit 2 for a usage error (an unreadable file, no code on a terminal),
 * before any connection.
 */
export default defineCommand<SubmitOptions, [file: string | undefined]>({
  configure(command) {
    command
      .argument('[file]', "the code: a file, or '-' (default) for stdin")
      .option('-w, --wait', 'stream its outputs and logs until it finishes; exit 0 on success, 1 otherwise')
      .option('--ref <ref>', 'a label for the process')
      .option(
        '--session <id>',
        'run in this session: programs of one session share their state (docs/sessions.md)',
      )
      .option('-t, --timeout <ms>', 'run time limit in milliseconds', numberOption('--timeout'))
      .option(
        '--lang <lang>',
        'language of the code: ts or js (default: from the file extension, else ts)',
        langOption,
      );
    addRemoteOptions(command);
  },
  async run({ args: [file], options }, io) {
    // The code is read before connecting: a missing file is a usage error, not a connection attempt.
    let code: string;
    try {
      code = await readCode(file, io);
    } catch (error) {
      io.stderr.write(`mci submit: ${(error as Error).message}\n`);
      return EXIT.USAGE;
    }
    return runRemote('submit', options, io, async (client) => {
      const created = await client.createProcess(code, {
        lang: options.lang ?? langOf(file),
        ...(options.ref !== undefined && { ref: options.ref }),
        ...(options.session !== undefined && { session: options.session }),
        ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
      });
      if (!options.wait) {
        io.stdout.write(`${created.pid}\n`);
        return EXIT.OK;
      }
      const final = await follow(client, io, created);
      return final.status === 'success' ? EXIT.OK : EXIT.FAILED;
    });
  },
});

async function readCode(file: string | undefined, io: CliIo): Promise<string> {
  if (file === undefined || file === '-') {
    if (io.stdin.isTTY) throw new UsageError("no code: give a FILE, or pipe the code in and pass '-'");
    return readText(io.stdin);
  }
  try {
    return await readFile(resolve(io.cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function langOf(file: string | undefined): string {
  const extension = file === undefined ? '' : extname(file).toLowerCase();
  return ['.js', '.mjs', '.cjs'].includes(extension) ? 'js' : 'ts';
}

/** Prints the process's events as they come (progress on stderr); resolves with its final snapshot. */
async function follow(client: MciClient, io: CliIo, created: ProcessSnapshot): Promise<ProcessSnapshot> {
  const progress = createProgress(io.stderr);
  const started = Date.now();
  let final: ProcessSnapshot = created;
  // The elapsed time ticks on a terminal only: elsewhere a line per state change is enough.
  const ticker = progress.live
    ? setInterval(
        () => progress.update(`pid ${created.pid}: ${final.state} ${formatDuration(Date.now() - started)}`),
        1000,
      )
    : undefined;
  ticker?.unref();
  try {
    for await (const event of client.events(created.pid)) {
      if (event.type === 'process') {
        final = event;
        // The idle state gets its own final line below.
        if (event.state !== 'idle') progress.update(`pid ${created.pid}: ${event.state}`);
      } else printEvent(event, io, (text, to) => progress.line(text, to));
    }
  } finally {
    clearInterval(ticker);
    progress.stop();
  }
  io.stderr.write(`${describeProcess(final)}\n`);
  return final;
}
