import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ServerEvent, type StreamResultEvent } from '@mci/client';
import { describe, expect, test } from 'vitest';
import { startInventoryServer } from '../support/inventory-server.ts';
import { examplePath, hasScript } from '@mci/test-support';
import { startServer } from '../support/start-server.ts';

// The reference chat client (examples/chat-client), spawned on a transcript against a real server.
const chatClient = examplePath('chat-client', 'src', 'main.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function chat(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@mci/source', '--disable-warning=ExperimentalWarning', chatClient, ...args],
      {
        env: { ...process.env, MCI_TOKEN: '', MCI_API_KEY: '', ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), 80_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the reference chat client', () => {
  test('streams a transcript token by token, shows intents and processes, prints the response pipe', {
    timeout: 90_000,
  }, async () => {
    await using inventory = await startInventoryServer();
    await using server = await startServer(inventory.serverOptions);
    const ref = 'chat-client-transcript';
    const run = await chat([
      examplePath('transcripts', 'inventory-check.md'),
      '--url',
      server.url,
      '--ref',
      ref,
      '--rate',
      '5000',
    ]);
    expect(run.stderr).not.toContain('mci-chat:');
    expect(run.code).toBe(0);

    // What the server sent as stream.result for that turn, read back from its history.
    await using client = await connect(server.url);
    const events: ServerEvent[] = [];
    for await (const event of client.subscribe({ ref }, { since: 0 })) {
      events.push(event);
      if (event.type === 'stream.result') break;
    }
    const result = events.at(-1) as StreamResultEvent;
    expect(run.stdout).toBe(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
    expect(result.processes.map((process) => process.status)).toEqual([
      'success',
      'success',
      'success',
      'success',
      'failed',
    ]);
    expect(run.stdout).toContain('Hello, Ada!');
    expect(run.stdout).toContain('item 404 is missing');

    // Progress (stderr, plain lines off a terminal): every intent, process state and output as it happened.
    const lines = run.stderr.trim().split('\n');
    const [first, , , , , last] = result.processes;
    expect(lines).toContain(`block 0 (ts, greeting) -> pid ${first?.pid}`);
    expect(lines.some((line) => /^block 4 \(python\) not run: /.test(line))).toBe(true);
    expect(lines).toContain(`pid ${first?.pid} output: "Hello, Ada!"`);
    expect(lines).toContain(`pid ${first?.pid} [block 0]: queued`);
    expect(lines).toContain(`pid ${first?.pid} [block 0]: running`);
    expect(lines.some((line) => line.startsWith(`pid ${first?.pid} [block 0]: success in `))).toBe(true);
    expect(
      lines.some((line) =>
        /^pid \d+ \[block 5\]: failed in \d+ ms: Error: item 404 is missing \(line 2\)$/.test(line),
      ),
    ).toBe(true);
    expect(lines.some((line) => line.includes('called greet'))).toBe(true);
    expect(last).toBeUndefined();
    // Lines come in the order things happened: a block, its process queued and running, its output, its end.
    const at = (line: string) => lines.indexOf(line);
    expect(at(`block 0 (ts, greeting) -> pid ${first?.pid}`)).toBeLessThan(
      at(`pid ${first?.pid} [block 0]: queued`),
    );
    expect(at(`pid ${first?.pid} [block 0]: queued`)).toBeLessThan(
      at(`pid ${first?.pid} [block 0]: running`),
    );
    expect(lines.filter((line) => line.startsWith('block 0 ')).length).toBe(1);
    expect(at(`pid ${first?.pid} [block 0]: running`)).toBeLessThan(
      at(`pid ${first?.pid} output: "Hello, Ada!"`),
    );
    expect(at(`pid ${first?.pid} output: "Hello, Ada!"`)).toBeLessThan(
      lines.findIndex((line) => line.startsWith(`pid ${first?.pid} [block 0]: success`)),
    );
  });

  test('reads the answer from stdin; usage errors exit 2; an unreachable server exits 1', {
    timeout: 60_000,
  }, async () => {
    await using server = await startServer();
    const answer = 'Two plus two:\n\n```ts exec=true\noutput(2 + 2)\n```\n';
    const run = await chat(['-', '--url', server.url, '--rate', '0'], { input: answer });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('block 0 (pid');
    expect(run.stdout).toContain('4');

    const usage = await chat(['--rate', 'fast'], { input: answer });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--rate must be a number');
    const down = await chat(['--url', 'http://127.0.0.1:1', '-'], { input: answer });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('CONNECT_FAILED');
  });

  test.skipIf(!hasScript)(
    'on a terminal, each process keeps one status line, updated in place',
    { timeout: 60_000 },
    async () => {
      await using server = await startServer();
      const answer = join(tmpdir(), `mci-chat-${process.pid}.md`);
      writeFileSync(
        answer,
        'Two blocks:\n\n```ts exec=true\noutput(1)\n```\n\n```ts exec=true\noutput(2)\n```\n',
      );
      const command = [
        process.execPath,
        '--conditions=@mci/source',
        '--disable-warning=ExperimentalWarning',
        chatClient,
        answer,
        '--url',
        server.url,
        '--rate',
        '0',
      ]
        .map((word) => `'${word}'`)
        .join(' ');
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'ignore'] });
        let text = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        child.stdin.end();
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${text}`)),
        );
      }).finally(() => rmSync(answer, { force: true }));
      // Redrawn in place: cursor up to the first status line, clear below, draw again.
      expect(output).toMatch(/\x1b\[\d+F\x1b\[0J/);
      expect(output).toMatch(/pid \d+ \[block 0\]: success in \d+ ms/);
      expect(output).toMatch(/pid \d+ \[block 1\]: success in \d+ ms/);
      expect(output).toMatch(/block 1 \(pid \d+\): success\r?\noutput: 2/);
    },
  );
});
