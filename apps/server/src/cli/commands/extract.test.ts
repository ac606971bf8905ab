import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnMci } from '@mci/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

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
    // The real program, its stdin a pipe.
    const run = await spawnMci(['extract', '-', '--format', 'text'], { input: chunks });
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
    const run = await mci(['extract'], { input: 'no code here\n' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  });

  it('exits 2 with a clear message for a missing file', async () => {
    const missing = await mci(['extract', join(dir, 'nope.md')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.md: ENOENT/);
  });

  it('exits 2 with a clear message for an unknown format', async () => {
    const format = await mci(['extract', '-', '--format', 'xml']);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be json or text, got "xml"');
  });
});
