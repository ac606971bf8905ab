import { createServer as createTcpServer } from 'node:net';
import { expect, it } from 'vitest';
import { createServer } from '../src/index.ts';
import { greetToolDir } from './support/greet-tools.ts';
import { until } from './support/until.ts';

// A server whose port is taken fails to start and leaves nothing of its own running: sandbox
// workers, the checker's thread, timers and in-memory databases are released.

const { file } = greetToolDir('mci-start-failure-');

/** What keeps the event loop alive now, by kind, but for the test's own listener. */
const resources = () =>
  process
    .getActiveResourcesInfo()
    .filter((kind) => kind !== 'Timeout')
    .sort();

it('rejects with EADDRINUSE when its port is taken, and releases everything it started', {
  timeout: 60_000,
}, async () => {
  const taken = createTcpServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  const before = resources();
  await expect(createServer({ port, file, logLevel: 'silent' })).rejects.toMatchObject({
    code: 'EADDRINUSE',
  });
  await until(
    'the failed start released its resources',
    async () => resources(),
    (now) => now.length <= before.length,
  );
  await new Promise((resolve) => taken.close(resolve));
});
