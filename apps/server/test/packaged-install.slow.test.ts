import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@mci/test-support';
import { afterAll, describe, expect, it } from 'vitest';

// The server outside this repository, as a user installs it: the packages built, @mci/server deployed
// with its workspace dependencies into an empty directory (`pnpm deploy`), then `mci` run from there
// in another empty directory, with the example tool file that ships inside the package.

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'mci-installed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('@mci/server installed outside the repository', () => {
  it('runs mci serve and a process that calls an example tool', { timeout: 600_000 }, async () => {
    const pnpm = (...args: string[]) => run('pnpm', args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
    await pnpm('turbo', 'run', 'build', '--filter=@mci/server...', '--output-logs=errors-only');
    const installed = join(dir, 'mci');
    await pnpm('--filter', '@mci/server', 'deploy', '--legacy', '--prod', installed);
    const work = mkdtempSync(join(dir, 'work-'));
    const mci = join(installed, 'bin', 'mci.js');

    const help = await run(process.execPath, [mci, '--help'], { cwd: work });
    expect(help.stdout).toContain('serve');

    const server = spawn(process.execPath, [mci, 'serve', '--port', '0', '--db', ':memory:'], {
      cwd: work,
      env: { ...process.env, MCI_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        server.stderr.setEncoding('utf8').on('data', (text: string) => {
          stderr += text;
          const match = /listening on (http:\/\/\S+)/.exec(stderr);
          if (match?.[1]) resolve(match[1]);
        });
        exited.then((code) => reject(new Error(`mci serve exited ${code}: ${stderr}`)));
      });
      const response = await fetch(`${url}/processes`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          code: 'const r = await tools.greet({ name: "Ada" }); output(r.content[0].text)',
          block: true,
        }),
      });
      expect(response.status).toBeLessThan(300);
      expect(await response.json()).toMatchObject({ status: 'success', outputs: ['Hello, Ada.'] });
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  });
});
