import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('./fixtures/close-right-after-a-run.ts', import.meta.url));

// Regression: a worker says `warm` shortly after each result. When that message arrived after
// `close()` had started, the pool updated its workers' refs as if open and unreferenced the worker
// it was waiting for: its exit was never seen, `close()` never resolved, and `mci run` exited 13
// (about one run in ten; the fixture makes it happen every time). Closed pools keep every worker referenced until it has exited.
it('close() right after a run always resolves', { timeout: 120_000 }, async () => {
  const { stdout } = await run(
    process.execPath,
    ['--no-node-snapshot', '--conditions=@mci/source', fixture, '5'],
    { timeout: 100_000 },
  );
  expect(stdout.trim()).toBe('closed 5');
});
