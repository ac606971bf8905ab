import type { MciClient, ProcessSnapshot } from '@mci/client';
import type { CliIo } from './io.ts';
import { describeProcess } from './process-format.ts';
import { createProgress } from './progress.ts';
import { describe, EXIT, parsePids } from './remote.ts';

/**
 * Sends `signal` to each pid in turn and prints the resulting state of each (after waiting for the
 * process to settle when `wait`). Keeps going after a refusal; exit 1 when any was refused (or, with
 * `requireSuccess`, did not end in success). `force` is sent with the signal as the MCI process API's
 * `force` flag (see docs/protocol.md for what the server does with it).
 */
export async function signalEach(
  client: MciClient,
  io: CliIo,
  name: string,
  signal: 'kill' | 'run',
  pidArgs: readonly string[],
  options: { wait: boolean; requireSuccess: boolean; force?: boolean },
): Promise<number> {
  const pids = parsePids(pidArgs);
  let exit: number = EXIT.OK;
  const progress = createProgress(io.stderr);
  try {
    for (const pid of pids) {
      let snapshot: ProcessSnapshot;
      try {
        snapshot = await client.signal(pid, signal, options.force ? { force: true } : {});
        const stopped = signal === 'kill' && snapshot.state === 'idle';
        if (options.wait && !stopped) {
          progress.update(`waiting for pid ${pid} (${snapshot.state})`);
          snapshot = await client.wait(pid);
        }
      } catch (error) {
        progress.stop();
        io.stderr.write(`mci ${name}: pid ${pid}: ${describe(error)}\n`);
        exit = EXIT.FAILED;
        continue;
      }
      progress.line(describeProcess(snapshot), io.stdout);
      if (options.requireSuccess && snapshot.status !== 'success') exit = EXIT.FAILED;
    }
  } finally {
    progress.stop();
  }
  return exit;
}
