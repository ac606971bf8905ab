import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeOutputValue } from '@mci/protocol';
import { startMci } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

const mciRun = (args: string[], options: { cwd: string; stdin?: string }) =>
  mci(['run', ...args], { cwd: options.cwd, ...(options.stdin !== undefined && { input: options.stdin }) });

let dir: string;
let toolFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mci-run-'));
  toolFile = join(dir, 'tools.json');
  await writeFile(
    toolFile,
    JSON.stringify({
      schemaVersion: '1.0',
      tools: [{ name: 'hello', execution: { type: 'text', text: 'Hello, {{props.name}}!' } }],
    }),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('mci run', { timeout: 60_000 }, () => {
  it('runs a snippet and prints the result as JSON (exit 0)', async () => {
    const r = await mciRun(
      [
        'output(1 + 1); console.log("hi"); return new Map([["k", 2n]])',
        '--format',
        'json',
        '--file',
        toolFile,
      ],
      {
        cwd: dir,
      },
    );
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({
      status: 'success',
      stdout: 'hi\n',
      stderr: '',
    });
    expect(result.durationMs).toBeGreaterThan(0);
    // Output values in the one wire encoding of every interface (docs/protocol.md).
    expect(result.outputs.map(decodeOutputValue)).toEqual([2, new Map([['k', 2n]])]);
  });

  it('finds and describes the tools of the file (tools.search, tools.describe)', async () => {
    const code =
      'const [found] = await tools.search("hello"); console.log(found.name, (await tools.describe(found.name)).declaration);';
    const r = await mciRun([code, '--file', toolFile], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('hello hello(props?: Record<string, unknown>): Promise<ToolResult>;\n\n');
  });

  it('reads the snippet from stdin and calls the tools of the file', async () => {
    const code = 'const r = await tools.hello({ name: "Ada" });\nconsole.log(r.content[0].text);';
    const r = await mciRun(['-', '--file', toolFile], { cwd: dir, stdin: code });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Hello, Ada!\n');
    expect(r.stderr).toMatch(
      /^tool hello ok \([\d.]+ ms\)\nsuccess in [\d.]+ ms, cpu [\d.]+ ms, heap [\d.]+ MB\n$/,
    );
  });

  it('never prints a value a tool reads from the environment, in text or JSON', async () => {
    const key = 'sk-run-0123456789abcdefghij';
    const file = join(dir, 'secret-tools.json');
    await writeFile(
      file,
      JSON.stringify({
        schemaVersion: '1.0',
        tools: [{ name: 'leaky', execution: { type: 'text', text: 'the key is {{env.RUN_TEST_KEY}}' } }],
      }),
    );
    const code = 'const r = await tools.leaky(); output(r.content[0].text); console.log(r.content[0].text);';
    for (const format of ['text', 'json']) {
      const r = await mci(['run', code, '--file', file, '--format', format], {
        cwd: dir,
        env: { RUN_TEST_KEY: key },
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('the key is [redacted:RUN_TEST_KEY]');
      expect(r.stdout + r.stderr).not.toContain(key.slice(3, 15));
    }
    const short = await mci(['run', code, '--file', file], { cwd: dir, env: { RUN_TEST_KEY: 'abc' } });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('the value of RUN_TEST_KEY has 3 characters');
  });

  it('exits 1 with the error position for a failing program', async () => {
    const r = await mciRun(['output("first");\nconst x: any = null;\nx.y = 1;', '--file', toolFile], {
      cwd: dir,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("output: 'first'\n");
    // The sandbox's own stderr line for the failure (as Node prints it), then the summary.
    expect(r.stderr).toMatch(
      // The program's stderr (the uncaught error, as Node prints one), then the outcome.
      /^TypeError: Cannot set properties of null \(setting 'y'\)\n {4}at .*:3:5\nfailed at line 3, column 5: TypeError: Cannot set properties of null \(setting 'y'\)/,
    );
  });

  it('--check stops a snippet the check finds certainly wrong before it runs, and reports warnings', async () => {
    const code = "const n: number = 'x';\noutput('ran');\nawait tools.helo({ name: 'a' });";
    const blocked = await mciRun([code, '--file', toolFile, '--check'], { cwd: dir });
    expect(blocked.code).toBe(1);
    expect(blocked.stdout).toBe('');
    expect(blocked.stderr).toBe(
      [
        'error: line 3: tools.helo does not exist. Did you mean tools.hello?',
        "warning: line 1: Type 'string' is not assignable to type 'number'.",
        'failed: CheckError: the check found 1 error; the program did not run',
        '',
      ].join('\n'),
    );
    const json = await mciRun([code, '--file', toolFile, '--check', 'block', '--format', 'json'], {
      cwd: dir,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: 'failed',
      error: { code: 'CHECK_FAILED', diagnostics: [{ line: 3, column: 13, code: 2551 }] },
      warnings: [{ line: 1, code: 2322 }],
    });
    const warned = await mciRun(
      ["const n: number = 'x';\noutput(n);", '--file', toolFile, '--check', 'warn', '--format', 'json'],
      { cwd: dir },
    );
    expect(warned.code).toBe(0);
    expect(JSON.parse(warned.stdout)).toMatchObject({
      status: 'success',
      outputs: ['x'],
      warnings: [{ code: 2322 }],
    });
    const bad = await mciRun(['output(1)', '--file', toolFile, '--check', 'strict'], { cwd: dir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--check.*strict.*(block|choices)/s);
  });

  it('enforces --timeout and --memory', async () => {
    const slow = await mciRun(
      ['while (true) {}', '--timeout', '300', '--format', 'json', '--file', toolFile],
      { cwd: dir },
    );
    expect(slow.code).toBe(1);
    expect(JSON.parse(slow.stdout)).toMatchObject({ status: 'timeout', error: { name: 'TimeoutError' } });
    const hog = await mciRun(
      [
        'const a: number[][] = []; while (true) a.push(new Array(1e6).fill(1.5))',
        '--memory',
        '16',
        '--format',
        'json',
        '--file',
        toolFile,
      ],
      { cwd: dir },
    );
    expect(hog.code).toBe(1);
    expect(JSON.parse(hog.stdout).error.message).toBe('The program ran out of memory (memoryLimitMb 16)');
  });

  it('lets fetch reach a local server only with --allow-net', async () => {
    const server = createServer((_, res) => res.end('from the host'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const code = `return await (await fetch('http://127.0.0.1:${port}/')).text()`;
      const denied = await mciRun([code, '--format', 'json', '--file', toolFile], { cwd: dir });
      expect(denied.code).toBe(1);
      expect(JSON.parse(denied.stdout).error.message).toMatch(
        new RegExp(`^fetch: 127\\.0\\.0\\.1:${port} is not allowed`),
      );
      const allowed = await mciRun(
        [code, '--format', 'json', '--allow-net', `127.0.0.1:${port}`, '--file', toolFile],
        { cwd: dir },
      );
      expect(allowed.code).toBe(0);
      expect(JSON.parse(allowed.stdout).outputs).toEqual(['from the host']);
    } finally {
      server.close();
    }
  });

  it('exits 1 with a clear message for a tool file that does not load, 2 for bad options', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ "schemaVersion": "1.0", "tools": [ { "name": 1 } ] }');
    const r = await mciRun(['return 1', '--file', bad], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: /);
    expect(r.stderr).toContain('bad.json');
    const opt = await mciRun(['return 1', '--timeout', 'soon'], { cwd: dir });
    expect(opt.code).toBe(2);
    expect(opt.stderr).toContain('--timeout must be a positive integer');
  });

  it('kills the execution on Ctrl-C (SIGINT) and exits 1', async () => {
    // The real program and a real signal.
    const child = startMci(['run', 'console.log("ready"); while (true) {}', '--file', toolFile], {
      cwd: dir,
    });
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    // Text mode streams the logs: interrupt once the program has really started.
    await new Promise<void>((resolve) =>
      child.stdout?.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.includes('ready')) resolve();
      }),
    );
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stdout).toBe('ready\n');
    expect(stderr).toMatch(
      /^canceled: killed by a signal\ncanceled: CanceledError: The execution was killed/,
    );
  });
});
