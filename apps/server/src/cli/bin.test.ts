import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// pnpm links every workspace package's `bin` at install time, before anything is built: the file
// must be in the checkout (a `bin` that points into dist/ makes `pnpm install` warn "Failed to create
// bin"), executable, and able to run `mci` from source.

const packageJson = new URL('../../package.json', import.meta.url);
const { bin } = JSON.parse(readFileSync(packageJson, 'utf8')) as { bin: Record<string, string> };

describe('the mci executable', () => {
  it('is a file of the checkout, not of the build', () => {
    expect(Object.keys(bin)).toEqual(['mci']);
    const target = new URL(bin.mci!, packageJson);
    expect(bin.mci).not.toMatch(/^(\.\/)?dist\//);
    expect(existsSync(target)).toBe(true);
    expect(statSync(target).mode & 0o111).not.toBe(0);
    expect(readFileSync(target, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('runs mci', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      new URL(bin.mci!, packageJson).pathname,
      '--help',
    ]);
    expect(stdout).toContain('Usage: mci');
  });
});
