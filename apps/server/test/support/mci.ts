import { type MciOptions, type MciRun, mciInProcess } from '@mci/test-support';
import { runMci } from '../../src/cli/program.ts';

/** Runs `mci ARGS` in this process (see `mciInProcess` of `@mci/test-support`). */
export function mci(args: readonly string[], options: MciOptions = {}): Promise<MciRun> {
  return mciInProcess(runMci, args, options);
}
