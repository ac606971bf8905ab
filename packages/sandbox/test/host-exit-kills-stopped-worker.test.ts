import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { pdeathsigLauncher } from '../src/worker-process.ts';

const run = promisify(execFile);
const host = fileURLToPath(new URL('./fixtures/host-exits-with-stopped-worker.ts', import.meta.url));

/** Alive and not a zombie (a killed child of a dead host is reaped by init soon after). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

// A worker whose main thread cannot run (hung in native code; here stopped with SIGSTOP) never sees
// its IPC channel close, so it outlived its host. Workers now start through `setpriv --pdeathsig
// SIGKILL` where util-linux has it: the kernel kills them with their host.
it.skipIf(!pdeathsigLauncher())(
  'a worker dies with its host even when it cannot run',
  {
    timeout: 60_000,
  },
  async () => {
    const { stdout } = await run(process.execPath, ['--conditions=@mci/source', host], { timeout: 30_000 });
    const pids = JSON.parse(stdout.trim().split('\n').at(-1)!) as number[];
    expect(pids.length).toBeGreaterThan(0);
    const deadline = Date.now() + 5_000;
    while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const survivors = pids.filter(alive);
    for (const pid of survivors) process.kill(pid, 'SIGKILL');
    expect(survivors).toEqual([]);
  },
);
