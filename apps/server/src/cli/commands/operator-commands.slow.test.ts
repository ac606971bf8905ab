import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type MciClient } from '@mci/client';
import { examplePath, hasScript, type MciRun, mciArgv, spawnMci } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mci as mciInProcess } from '../../../test/support/mci.ts';
import { createServer, type MciServer } from '../../server.ts';

// `mci ps | logs | kill | rerun | submit` as an operator runs them, against a real server.
const tools = examplePath('mci.yaml');

/** Runs `mci ARGS` in-process with MCI_URL pointing at `server` (stdin: `input`, else empty). */
function mci(
  args: string[],
  options: { input?: string; env?: Record<string, string>; url?: string } = {},
): Promise<MciRun> {
  const env = { MCI_URL: options.url ?? server.url, MCI_TOKEN: '', MCI_API_KEY: '', ...options.env };
  return mciInProcess(args, { cwd: dir, env, ...(options.input !== undefined && { input: options.input }) });
}

/** Runs `mci ARGS` on a pseudo-terminal (util-linux `script`), to see what a person at a terminal sees. */
function mciOnTerminal(args: string[]): Promise<MciRun> {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, ...mciArgv(args)].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: dir,
      env: { ...process.env, MCI_URL: server.url, MCI_TOKEN: '', MCI_API_KEY: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stdin.end();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr: '' }));
  });
}

let server: MciServer;
let client: MciClient;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mci-operator-'));
  // `mci ps` pages through 130 processes made in one burst: past the default request budget.
  server = await createServer({
    port: 0,
    file: tools,
    concurrency: 2,
    logLevel: 'silent',
    limits: { rateLimitPerSecond: 10_000 },
  });
  client = await connect(server.url);
});

afterAll(async () => {
  await client?.close();
  await server?.close({ graceMs: 0 });
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function file(name: string, code: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, code);
  return path;
}

const slowCounter = (count: number, everyMs: number) =>
  `for (let i = 0; i < ${count}; i++) { output(i); console.log('line ' + i); await new Promise((r) => setTimeout(r, ${everyMs})); }`;

describe('mci submit', () => {
  test('FILE: prints the pid and exits 0; the language comes from the extension', async () => {
    const run = await mci(['submit', await file('job.js', 'output(40 + 2)')]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const pid = Number(run.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await client.wait(pid)).toMatchObject({ lang: 'js', status: 'success' });
  });

  test('--wait streams outputs and console text, plain progress lines off a terminal, exit 0 on success', async () => {
    const run = await mci([
      'submit',
      await file('count.ts', slowCounter(3, 20)),
      '--wait',
      '--ref',
      'cli-submit',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('[output] 0\nline 0\n[output] 1\nline 1\n[output] 2\nline 2\n');
    const lines = run.stderr.trim().split('\n');
    expect(lines.slice(0, -1).every((line) => /^pid \d+: (queued|running)$/.test(line))).toBe(true);
    expect(lines.at(-1)).toMatch(/^pid \d+: idle \(success, run 1, [\d.]+m?s\)$/);
    expect(run.stderr).not.toContain('\x1b');
    const [process] = await client.list({ ref: 'cli-submit' });
    expect(process).toMatchObject({ status: 'success' });
  });

  test.skipIf(!hasScript)(
    '--wait on a terminal: a spinner line that is cleared, then the outcome',
    async () => {
      const run = await mciOnTerminal(['submit', await file('tty.ts', slowCounter(8, 150)), '--wait']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] pid \d+: running/);
      expect(run.stdout).toContain('\r\x1b[2K');
      expect(run.stdout).toContain('[output] 7');
      expect(run.stdout).toMatch(/pid \d+: idle \(success, run 1, [\d.]+m?s\)\r?\n$/);
    },
  );

  test("'-' reads stdin; a failing program exits 1 with its error and line", async () => {
    // The real program: its stdin a pipe, its exit code the process's.
    const run = await spawnMci(['submit', '-', '--wait'], {
      cwd: dir,
      env: { MCI_URL: server.url, MCI_TOKEN: '', MCI_API_KEY: '' },
      input: 'const x = 1;\nthrow new Error("bad input");\n',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/idle \(failed, run 1, .*\): Error: bad input \(line 2\)/);
  });

  test('usage errors exit 2: a missing file, a bad --timeout', async () => {
    const missing = await mci(['submit', join(dir, 'nope.ts')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
    const timeout = await mci(['submit', '-', '-t', '0'], { input: 'output(1)' });
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a positive integer');
    const lang = await mci(['submit', '-', '--lang', 'python'], { input: 'output(1)' });
    expect(lang.code).toBe(2);
    expect(lang.stderr).toContain('--lang must be ts or js, got "python"');
  });

  test('reads the file before it connects: a missing file is a usage error, with no connection attempt', async () => {
    const run = await mci(['submit', join(dir, 'nope.ts')], { url: 'http://127.0.0.1:1' });
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(`mci submit: cannot read ${join(dir, 'nope.ts')}: ENOENT\n`);
  });

  test('--lang takes ts or js, and the long spellings', async () => {
    for (const [given, lang] of [
      ['js', 'js'],
      ['javascript', 'js'],
      ['ts', 'ts'],
      ['typescript', 'ts'],
    ]) {
      const run = await mci(['submit', '-', '--lang', given!], { input: 'output(1)' });
      expect(run.code).toBe(0);
      expect(await client.wait(Number(run.stdout.trim()))).toMatchObject({ lang, status: 'success' });
    }
  });
});

describe('mci ps', () => {
  test('a table, newest first, with state, status, ref, age and duration; filters; json', async () => {
    const ref = `ps-${Date.now()}`;
    const ok = await client.createProcess('output(1)', { ref });
    const bad = await client.createProcess('throw new Error("x")', { ref });
    await client.wait(ok.pid);
    await client.wait(bad.pid);
    const run = await mci(['ps', '--ref', ref]);
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['PID', 'STATE', 'STATUS', 'RUN', 'REF', 'AGE', 'DURATION']);
    expect(rows.map((row) => row.split(/\s+/).slice(0, 5))).toEqual([
      [String(bad.pid), 'idle', 'failed', '1', ref],
      [String(ok.pid), 'idle', 'success', '1', ref],
    ]);
    expect(rows[0]).toMatch(/\d+s\s+[\d.]+m?s$/);

    const failed = await mci(['ps', '--ref', ref, '--status', 'failed', '--format', 'json']);
    expect(failed.code).toBe(0);
    const printed = JSON.parse(failed.stdout);
    const listed = await client.list({ ref, status: 'failed' });
    expect(printed).toEqual(
      listed.map((p) => ({ ...p, durationMs: expect.closeTo(p.durationMs ?? Number.NaN, 2) })),
    );
  });

  test('durations print rounded to 0.01 ms', async () => {
    const ref = `round-${Date.now()}`;
    const { pid } = await client.createProcess('output(1)', { ref });
    await client.wait(pid);
    const run = await mci(['ps', '--ref', ref, '--format', 'json']);
    const [printed] = JSON.parse(run.stdout);
    expect(Math.abs(printed.durationMs * 100 - Math.round(printed.durationMs * 100))).toBeLessThan(1e-6);
    expect(run.stdout).toMatch(/"durationMs": \d+(\.\d{1,2})?(,|\n)/);
  });

  test('pages through every process past one page of 100; --limit N prints the newest N', async () => {
    const ref = `many-${Date.now()}`;
    const pids: number[] = [];
    for (let i = 0; i < 130; i++)
      pids.push((await client.createProcess(`output(${i})`, { ref, autorun: false })).pid);
    const newestFirst = pids.reverse();
    const all = await mci(['ps', '--ref', ref, '--format', 'json']);
    expect(JSON.parse(all.stdout).map((p: { pid: number }) => p.pid)).toEqual(newestFirst);
    const few = await mci(['ps', '--ref', ref, '--limit', '3', '--format', 'json']);
    expect(JSON.parse(few.stdout).map((p: { pid: number }) => p.pid)).toEqual(newestFirst.slice(0, 3));
    const bad = await mci(['ps', '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit');
  });

  test('a bad --state is a usage error (exit 2)', async () => {
    const run = await mci(['ps', '--state', 'sleeping']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('sleeping');
  });
});

describe('mci logs', () => {
  test('a finished run: outputs and stdout on stdout, stderr on stderr; --run picks an earlier run', async () => {
    const { pid } = await client.createProcess('output({ n: 1 }); console.log("out"); console.error("err");');
    await client.wait(pid);
    await client.signal(pid, 'run');
    await client.wait(pid);
    const run = await mci(['logs', String(pid), '--run', '1']);
    expect(run).toMatchObject({ code: 0, stdout: '[output] {"n":1}\nout\n', stderr: 'err\n' });
  });

  test('--follow streams a running process in order until it finishes', async () => {
    // Long enough (8 s) that the spawned command finds it still running on a loaded machine.
    const { pid } = await client.createProcess(slowCounter(40, 200));
    for await (const event of client.subscribe(pid, { since: 0 })) if (event.type === 'output') break;
    const run = await mci(['logs', String(pid), '--follow']);
    expect(run.code).toBe(0);
    const expected = Array.from({ length: 40 }, (_, i) => `[output] ${i}\nline ${i}\n`).join('');
    expect(run.stdout).toBe(expected);
    expect(run.stderr).toContain(`pid ${pid} run 1: running`);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^pid ${pid}: idle \\(success, run 1`));
  });

  test('a failed or timed-out run: its status and error, exit 1', async () => {
    const failed = await client.createProcess('console.log("before"); throw new Error("boom")');
    const slow = await client.createProcess('while (true) {}', { timeoutMs: 200 });
    await client.wait(failed.pid);
    await client.wait(slow.pid);
    const run = await mci(['logs', String(failed.pid)]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('before\n');
    expect(run.stderr).toMatch(new RegExp(`pid ${failed.pid} run 1: failed: Error: boom \\(line 1\\)\\n$`));
    const timedOut = await mci(['logs', String(slow.pid)]);
    expect(timedOut.code).toBe(1);
    expect(timedOut.stderr).toMatch(new RegExp(`pid ${slow.pid} run 1: timeout: `));
  });

  test('a successful run exits 0 and prints no status', async () => {
    const { pid } = await client.createProcess('output("fine")');
    await client.wait(pid);
    expect(await mci(['logs', String(pid)])).toEqual({ code: 0, stdout: '[output] "fine"\n', stderr: '' });
  });

  test('an unknown pid exits 1 with the server error', async () => {
    const run = await mci(['logs', '987654']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('NOT_FOUND');
  });
});

describe('mci kill and mci rerun', () => {
  test('kill stops a running process and prints its state; an idle one is refused (exit 1), the rest still run', async () => {
    const loop = await client.createProcess('while (true) {}', { timeoutMs: 60_000 });
    for await (const event of client.subscribe(loop.pid, { since: 0 }))
      if (event.type === 'process' && event.state === 'running') break;
    const done = await client.createProcess('output(1)');
    await client.wait(done.pid);
    const run = await mci(['kill', String(done.pid), String(loop.pid)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`pid ${done.pid}:`);
    expect(run.stderr).toContain('CONFLICT');
    expect(run.stdout).toMatch(new RegExp(`^pid ${loop.pid}: idle \\(canceled, run 1`));
    expect(await client.get(loop.pid)).toMatchObject({ status: 'canceled' });
  });

  test('kill a process that never ran is refused (exit 1)', async () => {
    const held = await client.createProcess('output(1)', { autorun: false });
    const run = await mci(['kill', '--no-wait', String(held.pid)]);
    // Never run (idle, status null): nothing to kill.
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('CONFLICT');
  });

  test('rerun queues a new run and prints it; --wait prints the outcome, exit 1 unless all succeeded', async () => {
    const good = await client.createProcess('output("again")');
    const bad = await client.createProcess('throw new Error("still bad")');
    await client.wait(good.pid);
    await client.wait(bad.pid);

    const queued = await mci(['rerun', String(good.pid)]);
    expect(queued.code).toBe(0);
    expect(queued.stdout).toMatch(new RegExp(`^pid ${good.pid}: (queued|running) \\(run 2\\)`));
    await client.wait(good.pid);

    const waited = await mci(['rerun', '--wait', String(good.pid), String(bad.pid)]);
    expect(waited.code).toBe(1);
    const lines = waited.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^pid ${good.pid}: idle \\(success, run 3`));
    expect(lines[1]).toMatch(new RegExp(`^pid ${bad.pid}: idle \\(failed, run 2, .*\\): Error: still bad`));
    expect((await client.getRun(good.pid, 3)).outputs).toEqual(['again']);
  });

  test('rerun --force sends the run signal with force: true', async () => {
    const { pid } = await client.createProcess('output("forced")');
    await client.wait(pid);
    const run = await mci(['rerun', '--force', '--wait', String(pid)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^pid ${pid}: idle \\(success, run 2`));
    expect((await client.getRun(pid, 2)).outputs).toEqual(['forced']);
  });

  test('a pid that is not a number is a usage error', async () => {
    const run = await mci(['kill', 'abc']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not a pid: "abc"');
  });
});

describe('connection options', () => {
  test('an unreachable server exits 1 saying so', async () => {
    const run = await mci(['ps'], { url: 'http://127.0.0.1:1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot connect to ws://127.0.0.1:1/ws');
  });

  test('tokens: none says one is needed, a wrong one is refused; --token, MCI_TOKEN and MCI_API_KEY work', async () => {
    await using secured = await createServer({
      port: 0,
      file: tools,
      concurrency: 1,
      logLevel: 'silent',
      tokens: [{ token: 'op-key-4f2a9c', role: 'operator', id: 'ops' }],
    });
    const none = await mci(['ps'], { url: secured.url });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('mci ps: the server needs a token: pass --token or set MCI_TOKEN\n');
    const wrong = await mci(['ps', '--token', 'not-it'], { url: secured.url });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the token');
    expect((await mci(['ps', '--token', 'op-key-4f2a9c'], { url: secured.url })).code).toBe(0);
    expect((await mci(['ps'], { url: secured.url, env: { MCI_TOKEN: 'op-key-4f2a9c' } })).code).toBe(0);
    expect((await mci(['ps', '--url', secured.url], { env: { MCI_API_KEY: 'op-key-4f2a9c' } })).code).toBe(0);
  });
});
