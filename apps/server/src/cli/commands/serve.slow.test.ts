import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { examplePath, type MciOptions, type MciRun } from '@mci/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

// `mci serve` in-process: where it keeps processes by default, and how its logs look.

const dir = mkdtempSync(join(tmpdir(), 'mci-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `mci serve`; resolves with its URL and a `stop()` that sends SIGTERM and waits for the end. */
async function serve(args: string[], options: MciOptions) {
  const signals = new EventEmitter();
  let stderr = '';
  let listening!: (url: string) => void;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const done = mci(['serve', '--port', '0', '--file', examplePath('mci.yaml'), ...args], {
    ...options,
    signals,
    onStderr: (text) => {
      stderr += text;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) listening(match[1]);
    },
  });
  const started = await Promise.race([url, done.then((run) => Promise.reject(new Error(run.stderr)))]);
  return {
    url: started,
    stop: (): Promise<MciRun> => {
      signals.emit('SIGTERM');
      return done;
    },
  };
}

describe('mci serve', () => {
  it('keeps processes in one per-user database wherever it starts, and says where', {
    timeout: 60_000,
  }, async () => {
    const env = { XDG_DATA_HOME: join(dir, 'data'), MCI_DB: '', MCI_LOG_LEVEL: 'silent' };
    const db = join(dir, 'data', 'mci', 'mci.db');

    const first = await serve([], { cwd: mkdtempSync(join(dir, 'repo-')), env });
    const created = await fetch(`${first.url}/processes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: 'output(1)', ref: 'seen-from-elsewhere', block: true }),
    });
    expect(created.status).toBeLessThan(300);
    const firstRun = await first.stop();
    expect(firstRun.code).toBe(0);
    expect(firstRun.stderr).toContain(`Processes are stored in ${db}\n`);
    expect(firstRun.stderr).toContain(
      'Sandboxed fetch reaches nothing (no egress rule: add allowNet or fetch policies)\n',
    );

    const second = await serve([], { cwd: mkdtempSync(join(dir, 'app-')), env });
    const listed = (await (await fetch(`${second.url}/processes?ref=seen-from-elsewhere`)).json()) as {
      processes: unknown[];
    };
    const secondRun = await second.stop();
    expect(listed.processes).toHaveLength(1);
    expect(secondRun.stderr).toContain(`Processes are stored in ${db}\n`);
  });

  it('logs JSON lines off a terminal, readable lines on one or with --log-format pretty', async () => {
    const env = { MCI_LOG_LEVEL: 'info' };
    const json = await (await serve(['--db', ':memory:'], { env })).stop();
    const first = json.stdout.split('\n')[0] ?? '';
    expect(JSON.parse(first)).toMatchObject({ level: 30, msg: 'process store open' });

    for (const [args, tty] of [
      [[], true],
      [['--log-format', 'pretty'], false],
    ] as const) {
      const pretty = await (await serve(['--db', ':memory:', ...args], { env, tty })).stop();
      const lines = pretty.stdout.trim().split('\n');
      expect(lines.some((line) => /INFO.*MCI server listening/.test(line))).toBe(true);
      expect(lines.every((line) => !line.startsWith('{'))).toBe(true);
    }

    const forced = await (
      await serve(['--db', ':memory:', '--log-format', 'json'], { env, tty: true })
    ).stop();
    expect(JSON.parse(forced.stdout.split('\n')[0] ?? '')).toMatchObject({ msg: 'process store open' });
  });

  it('prints where the web console is; a console served elsewhere gets the page loads', async () => {
    const env = { MCI_LOG_LEVEL: 'silent', MCI_CONSOLE_URL: 'http://127.0.0.1:5173' };
    const server = await serve(['--db', ':memory:'], { env });
    const page = await fetch(`${server.url}/processes/3`, {
      headers: { Accept: 'text/html' },
      redirect: 'manual',
    });
    const run = await server.stop();
    expect(run.stderr).toContain('\nWeb console: http://127.0.0.1:5173\n');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('http://127.0.0.1:5173/processes/3');
  });

  it('refuses a console URL that is not http(s) with exit 2, naming the variable', async () => {
    const run = await mci(['serve', '--port', '0', '--db', ':memory:', '--file', examplePath('mci.yaml')], {
      env: { MCI_LOG_LEVEL: 'silent', MCI_CONSOLE_URL: 'javascript:alert(1)' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('MCI_CONSOLE_URL must be an http(s) URL');
  });
});
