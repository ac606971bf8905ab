import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { pdeathsigLauncher } from '../src/worker-process.ts';
import { workersAfterHostExit } from './helpers.ts';

const host = fileURLToPath(new URL('./fixtures/host-exits-with-stopped-worker.ts', import.meta.url));

// A worker whose main thread cannot run (hung in native code; here stopped with SIGSTOP) never sees
// its IPC channel close, so it outlived its host. Workers now start through `setpriv --pdeathsig
// SIGKILL` where util-linux has it: the kernel kills them with their host.
it.skipIf(!pdeathsigLauncher())(
  'a worker dies with its host even when it cannot run',
  {
    timeout: 60_000,
  },
  async () => {
    const { pids, survivors } = await workersAfterHostExit(host, 5_000);
    expect(pids.length).toBeGreaterThan(0);
    expect(survivors).toEqual([]);
  },
);
