import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { workersAfterHostExit } from './helpers.ts';

const host = fileURLToPath(new URL('./fixtures/host-exits-mid-loop.ts', import.meta.url));

// Regression: a worker whose host died while its isolate ran a tight loop used to stay alive,
// orphaned and spinning a core (`process.exit()` waited for the isolate forever).
it('a worker exits when its host dies, even with an isolate in a tight loop', {
  timeout: 60_000,
}, async () => {
  const { pids, survivors } = await workersAfterHostExit(host, 10_000);
  // The list also holds the short-lived `ps` itself; the worker is among the rest.
  expect(pids.length).toBeGreaterThan(0);
  expect(survivors).toEqual([]);
});
