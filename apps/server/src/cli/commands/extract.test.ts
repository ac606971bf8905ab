import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The real `mci` command line, spawned as a user would run it (real exit codes, real output).
const main = fileURLToPath(new URL('../main.ts', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function mci(args: string[], stdin?: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@mci/source', '--disable-warning=ExperimentalWarning', main, ...args],
      {
        timeout: 60_000,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (data: string) => (stdout += data));
    child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    for (const chunk of stdin ?? []) child.stdin.write(chunk);
    child.stdin.end();
  });
}

const answer = [
  'I will load the user.',
  '',
  '```ts exec=true id=fetch-user',
  'const res = await fetch("https://api.example.com/users/1");',
  'output(res.json());',
  '```',
  '',
  '```ts',
  'notAnIntent();',
  '```',
  '',
  '> ```js exec',
  '> truncated(',
].join('\n');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mci-extract-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mci extract', () => {
  it('prints the intents of a file as JSON', async () => {
    const file = join(dir, 'answer.md');
    await writeFile(file, answer);
    const run = await mci(['extract', file]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      {
        index: 0,
        lang: 'ts',
        code: 'const res = await fetch("https://api.example.com/users/1");\noutput(res.json());',
        attributes: { exec: true, id: 'fetch-user' },
        info: 'ts exec=true id=fetch-user',
        startLine: 3,
        endLine: 6,
        closed: true,
      },
      {
        index: 1,
        lang: 'js',
        code: 'truncated(',
        attributes: { exec: true },
        info: 'js exec',
        startLine: 12,
        endLine: 13,
        closed: false,
      },
    ]);
  });

  it('reads stdin (streamed in small chunks) when FILE is - and prints text', async () => {
    const chunks = answer.match(/[\s\S]{1,5}/g)!;
    const run = await mci(['extract', '-', '--format', 'text'], chunks);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        '--- intent 0: ts, lines 3-6, closed  [ts exec=true id=fetch-user]',
        'const res = await fetch("https://api.example.com/users/1");',
        'output(res.json());',
        '--- intent 1: js, lines 12-13, UNCLOSED, will not run  [js exec]',
        'truncated(',
        '',
      ].join('\n'),
    );
  });

  it('reads stdin when FILE is absent and prints [] for a document without intents', async () => {
    const run = await mci(['extract'], ['no code here\n']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  });

  it('exits 2 with a clear message for a missing file', async () => {
    const missing = await mci(['extract', join(dir, 'nope.md')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.md: ENOENT/);
  });

  it('exits 2 with a clear message for an unknown format', async () => {
    const format = await mci(['extract', '-', '--format', 'xml'], ['']);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be json or text, got "xml"');
  });
});
