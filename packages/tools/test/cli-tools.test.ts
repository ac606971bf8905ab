import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { isAlive } from './helpers/processes.ts';
import { runnerFor, runnerForTool } from './helpers/tool-dir.ts';
import { expectCanceled } from './helpers/results.ts';

/** A shell that starts a grandchild (`sleep 60`), writes its pid to the file `$1`, and waits. */
const HANG = {
  type: 'cli',
  command: 'sh',
  args: ['-c', 'sleep 60 & echo $! > "$1"; wait', 'sh', '{{props.pidFile}}'],
};

async function waitForPid(file: string): Promise<number> {
  return vi.waitFor(
    async () => {
      const text = await readFile(file, 'utf8');
      const pid = Number(text);
      if (!pid) throw new Error('no pid yet');
      return pid;
    },
    { timeout: 10_000, interval: 20 },
  );
}

describe('cli tools', () => {
  it('builds argv from templated args, then flags in declared order, without a shell', async () => {
    await using t = await runnerForTool({
      name: 'echo',
      execution: {
        type: 'cli',
        command: 'echo',
        args: ['{{props.word}}', '{!!props.count!!}', '$HOME;', '*'],
        flags: {
          '--verbose': { from: 'props.verbose', type: 'boolean' },
          '--limit': { from: 'props.limit', type: 'value' },
          '-q': { from: 'props.quiet', type: 'boolean' },
          '--name': { from: 'props.name', type: 'value' },
          '--zero': { from: 'props.zero', type: 'value' },
        },
      },
    });
    const all = await t.runner.execute('echo', {
      word: 'hi there',
      count: 3,
      verbose: true,
      limit: 10,
      quiet: false,
      name: null,
      zero: 0,
    });
    expect(all.isError, all.error).toBe(false);
    const expected = 'hi there 3 $HOME; * --verbose --limit=10 --zero=0\n';
    expect(all.content).toEqual([{ type: 'text', text: expected }]);
    expect(all.metadata).toEqual({
      exit_code: 0,
      stdout_bytes: expected.length,
      stderr_bytes: 0,
      stderr: '',
    });

    const none = await t.runner.execute('echo', { word: 'x', count: 1 });
    expect(none.content).toEqual([{ type: 'text', text: 'x 1 $HOME; *\n' }]);
  });

  it('passes a short value flag as two arguments and keeps --long=value as one', async () => {
    await using t = await runnerFor({
      tools: [
        {
          name: 'head',
          execution: {
            type: 'cli',
            command: 'head',
            flags: {
              '-n': { from: 'props.lines', type: 'value' },
              '--bytes': { from: 'props.bytes', type: 'value' },
            },
            args: ['{{props.file}}'],
          },
        },
        {
          name: 'argv',
          execution: {
            type: 'cli',
            command: 'sh',
            args: ['-c', 'printf "[%s]" "$@"', 'sh'],
            flags: {
              '-n': { from: 'props.n', type: 'value' },
              '--size': { from: 'props.size', type: 'value' },
            },
          },
        },
      ],
    });
    const file = join(t.dir, 'lines.txt');
    await writeFile(file, 'one\ntwo\nthree\n');
    // `head -n=2` fails ("invalid number of lines"); `head -n 2` prints two lines.
    const head = await t.runner.execute('head', { lines: 2, file });
    expect(head.isError, head.error).toBe(false);
    expect(head.content).toEqual([{ type: 'text', text: 'one\ntwo\n' }]);
    const argv = await t.runner.execute('argv', { n: 2, size: 'big' });
    expect(argv.content).toEqual([{ type: 'text', text: '[-n][2][--size=big]' }]);
  });

  describe('props that start with "-" in positional arguments', () => {
    const echo = (extra: Record<string, unknown> = {}) => ({
      name: 'echo',
      execution: { type: 'cli', command: 'echo', args: ['{{props.text}}'], ...extra },
    });

    it('refuses a templated positional argument that would be read as an option', async () => {
      await using t = await runnerForTool(echo());
      const result = await t.runner.execute('echo', { text: '--help' });
      expect(result.isError).toBe(true);
      expect(result.error).toBe(
        'execution.args[0] ("{{props.text}}") is "--help", which starts with "-" and would be read as an option; pass a value that does not start with "-" (the tool file can set endOfOptions or enableOptionLikeArgs to allow it)',
      );
      const fine = await t.runner.execute('echo', { text: 'a -b' });
      expect(fine.content).toEqual([{ type: 'text', text: 'a -b\n' }]);
    });

    it('with endOfOptions, passes flags, then "--", then the args as operands', async () => {
      await using t = await runnerForTool({
        name: 'argv',
        execution: {
          type: 'cli',
          command: 'sh',
          args: ['{{props.word}}'],
          flags: { '-c': { from: 'props.script', type: 'value' } },
          endOfOptions: true,
        },
      });
      // sh -c SCRIPT -- WORD: "--" becomes $0, WORD is $1.
      const result = await t.runner.execute('argv', { script: 'printf "[%s]" "$0" "$@"', word: '-rf' });
      expect(result.isError, result.error).toBe(false);
      expect(result.content).toEqual([{ type: 'text', text: '[--][-rf]' }]);
    });

    it('with enableOptionLikeArgs, passes the value as it is', async () => {
      await using t = await runnerForTool(echo({ enableOptionLikeArgs: true }));
      const result = await t.runner.execute('echo', { text: '-n' });
      expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: '' }] });
    });
  });

  it('reports a non-zero exit with the exit code and stderr', async () => {
    await using t = await runnerForTool({
      name: 'fail',
      execution: {
        type: 'cli',
        command: 'sh',
        args: ['-c', 'echo partial; echo "boom: {{props.what}}" >&2; exit 3'],
      },
    });
    const result = await t.runner.execute('fail', { what: 'disk full' });
    expect(result).toEqual({
      isError: true,
      error: 'Command exited with code 3: boom: disk full',
      content: [{ type: 'text', text: 'Command exited with code 3: boom: disk full' }],
      metadata: {
        exit_code: 3,
        stdout_bytes: 8,
        stderr_bytes: 16,
        stderr: 'boom: disk full\n',
        stdout: 'partial\n',
      },
    });
  });

  it('passes the runner environment, explicit values winning over the process environment', async () => {
    process.env.MCI_TEST_FROM_PROCESS = 'process';
    process.env.MCI_TEST_OVERRIDDEN = 'process';
    try {
      await using t = await runnerFor(
        {
          tools: [
            {
              name: 'env',
              execution: {
                type: 'cli',
                command: 'node',
                args: [
                  '-e',
                  'console.log([process.env.MCI_TEST_FROM_PROCESS, process.env.MCI_TEST_OVERRIDDEN, process.argv[1]].join(","))',
                  '{{env.MCI_TEST_OVERRIDDEN}}',
                ],
              },
            },
          ],
        },
        { env: { MCI_TEST_OVERRIDDEN: 'explicit' } },
      );
      const result = await t.runner.execute('env');
      expect(result.content).toEqual([{ type: 'text', text: 'process,explicit,explicit\n' }]);
    } finally {
      delete process.env.MCI_TEST_FROM_PROCESS;
      delete process.env.MCI_TEST_OVERRIDDEN;
    }
  });

  it('runs in the tool file directory by default, or in a templated, path-checked cwd', async () => {
    await using t = await runnerFor({
      tools: [
        { name: 'pwd', execution: { type: 'cli', command: 'pwd' } },
        { name: 'pwd-in', execution: { type: 'cli', command: 'pwd', cwd: '{{props.dir}}' } },
      ],
    });
    await import('node:fs/promises').then((fs) =>
      fs.mkdir(join(t.dir, 'sub', 'deeper'), { recursive: true }),
    );
    expect((await t.runner.execute('pwd')).content).toEqual([{ type: 'text', text: `${t.dir}\n` }]);
    expect((await t.runner.execute('pwd-in', { dir: 'sub/deeper' })).content).toEqual([
      { type: 'text', text: `${join(t.dir, 'sub', 'deeper')}\n` },
    ]);
    const outside = await t.runner.execute('pwd-in', { dir: 'sub/../..' });
    expect(outside.isError).toBe(true);
    expect(outside.error).toContain('is outside the allowed directories');
  });

  it('kills the whole process group on timeout', async () => {
    await using t = await runnerForTool({
      name: 'hang',
      execution: { ...HANG, timeout_ms: 2000 },
    });
    const pidFile = join(t.dir, 'grandchild.pid');
    const result = await t.runner.execute('hang', { pidFile });
    expect(result.isError).toBe(true);
    expect(result.error).toBe('Command timed out after 2000 ms and was killed: sh');
    expect(result.metadata?.timed_out).toBe(true);
    const grandchild = await waitForPid(pidFile);
    await vi.waitFor(() => expect(isAlive(grandchild)).toBe(false), { timeout: 5000 });
  });

  it('kills the process group at once when canceled', async () => {
    await using t = await runnerForTool({ name: 'hang', execution: HANG });
    const pidFile = join(t.dir, 'grandchild.pid');
    const controller = new AbortController();
    const pending = t.runner.execute('hang', { pidFile }, { signal: controller.signal });
    const grandchild = await waitForPid(pidFile);
    expect(isAlive(grandchild)).toBe(true);
    controller.abort();
    const result = await pending;
    expectCanceled(result);
    await vi.waitFor(() => expect(isAlive(grandchild)).toBe(false), { timeout: 5000 });
  });

  it('caps captured output and says so', async () => {
    await using t = await runnerFor(
      {
        tools: [
          {
            name: 'chatty',
            execution: {
              type: 'cli',
              command: 'node',
              args: [
                '-e',
                'process.stdout.write("x".repeat(100000)); process.stderr.write("e".repeat(5000))',
              ],
            },
          },
        ],
      },
      { maxOutputBytes: 1000 },
    );
    const result = await t.runner.execute('chatty');
    expect(result.isError).toBe(false);
    expect(result.content).toEqual([
      { type: 'text', text: 'x'.repeat(1000) },
      { type: 'text', text: '[output cut: kept 1000 of 100000 bytes]' },
    ]);
    expect(result.metadata).toMatchObject({
      stdout_bytes: 100000,
      stderr_bytes: 5000,
      stdout_truncated: true,
      stderr_truncated: true,
      stderr: 'e'.repeat(1000),
    });
  });

  it('reports a command that cannot start', async () => {
    await using t = await runnerForTool({
      name: 'nope',
      execution: { type: 'cli', command: 'mci-no-such-command-xyz' },
    });
    const result = await t.runner.execute('nope');
    expect(result.isError).toBe(true);
    expect(result.error).toMatch(/^Command could not be run: .*mci-no-such-command-xyz.*ENOENT/);
  });

  it('runs concurrent executions independently', async () => {
    await using t = await runnerForTool({
      name: 'id',
      execution: { type: 'cli', command: 'sh', args: ['-c', 'sleep 0.2; echo {{props.n}}'] },
    });
    const results = await Promise.all(Array.from({ length: 6 }, (_, n) => t.runner.execute('id', { n })));
    expect(results.map((r) => r.content[0])).toEqual(
      Array.from({ length: 6 }, (_, n) => ({ type: 'text', text: `${n}\n` })),
    );
  });
});
