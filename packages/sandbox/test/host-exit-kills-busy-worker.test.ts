import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const host = fileURLToPath(new URL('./fixtures/host-exits-mid-loop.ts', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Regression: a worker whose host died while its isolate ran a tight loop used to stay alive,
// orphaned and spinning a core (`process.exit()` waited for the isolate forever).
it('a worker exits when its host dies, even with an isolate in a tight loop', {
  timeout: 60_000,
}, async () => {
  const { stdout } = await run(process.execPath, ['--conditions=@mci/source', host], { timeout: 30_000 });
  const pids = JSON.parse(stdout.trim().split('\n').at(-1)!) as number[];
  // The list also holds the short-lived `ps` itself; the worker is among the rest.
  expect(pids.length).toBeGreaterThan(0);
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const survivors = pids.filter(alive);
  for (const pid of survivors) process.kill(pid, 'SIGKILL');
  expect(survivors).toEqual([]);
});
