import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServerProcess } from '@mci/test-support';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TRANSCRIPT_TOOLS } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

// `mci serve` as a real child process: SIGTERM stops accepting, lets running processes finish within
// the grace period, cancels the rest, closes WebSockets with 1001 and exits 0.

/** `mci serve ARGS` with info logs and a throwaway database (`group`: in its own process group). */
const serve = (args: string[], env: Record<string, string> = {}, options: { group?: boolean } = {}) =>
  spawnServerProcess({
    args,
    env: { MCI_LOG_LEVEL: 'info', MCI_DB: ':memory:', ...env },
    // Its own process group, which a terminal's Ctrl-C signals as a whole (sandbox workers too).
    detached: options.group === true,
  });

const kill = (child: ChildProcess) => child.exitCode === null && child.kill('SIGKILL');

describe('mci serve', () => {
  it('shuts down gracefully on SIGTERM', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mci-serve-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'server.yaml'), 'shutdownGraceMs: 5000\n');
    const server = serve([
      '--file',
      TRANSCRIPT_TOOLS,
      '--port',
      '0',
      '--concurrency',
      '2',
      '--config',
      join(dir, 'server.yaml'),
    ]);
    try {
      const url = await server.url;
      expect(server.stderr()).toContain(`curl -s ${url}/processes`);
      await using client = await TestClient.open(`${url.replace('http', 'ws')}/ws`);
      // Warm both sandbox workers, so the grace period measures the program, not a worker's start.
      const warm = await Promise.all(
        [0, 1].map(() => client.ok({ type: 'process.create', code: 'output(0)' })),
      );
      for (const { result } of warm) await client.waitIdle(result.process.pid);
      const finishing = await client.ok({
        type: 'process.create',
        code: 'await new Promise((r) => setTimeout(r, 800)); output("finished")',
      });
      const looping = await client.ok({
        type: 'process.create',
        code: 'while (true) {}',
        timeoutMs: 120_000,
      });
      const queued = await client.ok({ type: 'process.create', code: 'output("never")' });
      for (const { result } of [finishing, looping]) {
        await client.waitFor(
          (m) => m.type === 'process' && m.pid === result.process.pid && m.state === 'running',
        );
      }
      server.child.kill('SIGTERM');
      // Shutdown began once the queued process is canceled; from then on new work is refused (503).
      await client.waitFor(
        (m) => m.type === 'process' && m.pid === queued.result.process.pid && m.state === 'idle',
      );
      expect(await client.request({ type: 'process.create', code: 'output(1)' })).toMatchObject({
        type: 'error',
        code: 'SHUTTING_DOWN',
      });
      expect(await client.closed).toBe(1001);
      expect(await server.exited).toBe(0);
      const final = (pid: number) =>
        client.messages.filter((m) => m.type === 'process' && m.pid === pid).at(-1) as {
          state: string;
          status: string;
        };
      expect(
        final(finishing.result.process.pid),
        JSON.stringify(client.messages.filter((m) => m.type === 'process')),
      ).toMatchObject({ state: 'idle', status: 'success' });
      expect(final(looping.result.process.pid)).toMatchObject({ state: 'idle', status: 'canceled' });
      expect(final(queued.result.process.pid)).toMatchObject({ state: 'idle', status: 'canceled' });
      expect(client.messages.some((m) => m.type === 'output' && m.value === 'finished')).toBe(true);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
      // One pino line per process transition, each with its pid.
      const lines = server
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(
        lines.some((l) => l.pid === looping.result.process.pid && /cancel/.test(JSON.stringify(l))),
      ).toBe(true);
    } finally {
      kill(server.child);
    }
  });

  it('drains once when one Ctrl-C arrives twice (terminal and supervisor), then exits 0', {
    timeout: 60_000,
  }, async () => {
    const server = serve(
      ['--file', TRANSCRIPT_TOOLS, '--port', '0', '--concurrency', '1'],
      {},
      { group: true },
    );
    try {
      const url = await server.url;
      await using client = await TestClient.open(`${url.replace('http', 'ws')}/ws`);
      const finishing = await client.ok({
        type: 'process.create',
        code: 'await new Promise((r) => setTimeout(r, 1500)); output("finished")',
      });
      const pid = finishing.result.process.pid;
      await client.waitFor((m) => m.type === 'process' && m.pid === pid && m.state === 'running');
      // `pnpm dev` under `node --watch`: the terminal signals the whole group (the server and its
      // sandbox workers), and the watcher forwards the signal to the server once more.
      process.kill(-server.child.pid!, 'SIGINT');
      server.child.kill('SIGINT');
      expect(await server.exited).toBe(0);
      expect(client.messages.some((m) => m.type === 'output' && m.value === 'finished')).toBe(true);
      expect(server.stderr()).not.toMatch(/again|error|failed/i);
    } finally {
      kill(server.child);
    }
  });

  it('refuses a non-loopback host without tokens unless --insecure', { timeout: 60_000 }, async () => {
    const onAllInterfaces = (...args: string[]) =>
      serve(['--file', TRANSCRIPT_TOOLS, '--host', '0.0.0.0', '--port', '0', '--db', ':memory:', ...args]);
    const refused = onAllInterfaces();
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toMatch(/refusing to listen on 0\.0\.0\.0 without tokens/);

    const allowed = onAllInterfaces('--insecure');
    try {
      await allowed.url;
      allowed.child.kill('SIGINT');
      expect(await allowed.exited).toBe(0);
    } finally {
      kill(allowed.child);
    }

    const badPort = serve(['--port', 'eighty']);
    expect(await badPort.exited).not.toBe(0);
  });
});
