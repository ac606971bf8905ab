import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DRAW_PNG_PROGRAM, PNG_SIGNATURE } from '@mci/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

// `mci run --save-files DIR`: the run's files and pictures land in DIR, and their paths are printed.

let dir: string;
let toolFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mci-save-files-'));
  toolFile = join(dir, 'tools.json');
  await writeFile(toolFile, JSON.stringify({ schemaVersion: '1.0', tools: [] }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const PROGRAM = `${DRAW_PNG_PROGRAM}\noutput.file('report.csv', 'a,b\\n1,2\\n', 'text/csv');`;

describe('mci run --save-files', { timeout: 60_000 }, () => {
  it('saves the files under their names and the pictures as image-N files, and prints the paths', async () => {
    const r = await mci(['run', PROGRAM, '--file', toolFile, '--save-files', 'out'], { cwd: dir });
    expect(r.code).toBe(0);
    const out = join(dir, 'out');
    const paths = ['square.png', 'report.csv', 'image-1.png'].map((name) => join(out, name));
    expect(r.stderr).toContain(paths.map((path) => `saved: ${path}\n`).join(''));
    expect(r.stdout).toContain('file: square.png (image/png, 120 bytes)\n');
    expect(await readFile(join(out, 'report.csv'), 'utf8')).toBe('a,b\n1,2\n');
    const square = await readFile(join(out, 'square.png'));
    expect(Uint8Array.from(square.subarray(0, 8))).toEqual(PNG_SIGNATURE);
    expect(await readFile(join(out, 'image-1.png'))).toEqual(square);
  });

  it('lists files and saved paths in the JSON result', async () => {
    const r = await mci(
      ['run', PROGRAM, '--file', toolFile, '--save-files', 'json-out', '--format', 'json'],
      {
        cwd: dir,
      },
    );
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.files).toEqual([
      { name: 'square.png', mimeType: 'image/png', size: 120 },
      { name: 'report.csv', mimeType: 'text/csv', size: 8 },
    ]);
    expect(result.saved).toEqual(
      ['square.png', 'report.csv', 'image-1.png'].map((name) => join(dir, 'json-out', name)),
    );
  });
});
