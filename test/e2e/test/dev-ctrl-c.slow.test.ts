import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasScript, repoRoot } from '@mci/test-support';
import { afterAll, describe, expect, it } from 'vitest';

// `pnpm dev` at the root on a terminal (util-linux `script` gives it a pseudo-terminal), then one
// Ctrl-C typed on that terminal while a program runs: the terminal signals every process of the group
// (pnpm, turbo, node --watch, the server, its sandbox workers); the server drains and stops, and no
// layer prints a failure. turbo itself ends with 0 or, at times, with 130 (the shell's code for an
// end by Ctrl-C) when every task exited 0: both are a clean stop.

const dir = mkdtempSync(join(tmpdir(), 'mci-dev-'));

/** A TCP port free on 127.0.0.1 now (for Vite, which needs a fixed port the server redirects to). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pnpm dev', () => {
  it.skipIf(!hasScript)(
    'stops on one Ctrl-C: drained, exit 0 or 130, no failure lines',
    { timeout: 120_000 },
    async () => {
      const child = spawn('script', ['-qec', 'pnpm dev', '/dev/null'], {
        cwd: repoRoot,
        env: {
          ...process.env,
          MCI_PORT: '0',
          MCI_DB: ':memory:',
          XDG_DATA_HOME: dir,
          DEMO_API_PORT: '0',
          MCI_CONSOLE_URL: `http://127.0.0.1:${await freePort()}`,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (text: string) => {
          output += text;
          if (output.includes('MCI server listening on')) resolve();
        });
        exited.then(() => reject(new Error(`pnpm dev ended before listening:\n${output}`)));
      });
      child.stdin.write('\x03');
      expect([0, 130], output).toContain(await exited);
      expect(output).toContain('stopped');
      expect(output).not.toMatch(/ELIFECYCLE|ERR_PNPM|again, exiting now|Command failed|ERROR/);
    },
  );
});
