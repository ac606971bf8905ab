import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EXAMPLE_TOOL_FILE, resolveToolFilePath } from './tool-file.ts';

/** A temporary directory, removed when the test finishes. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mci-cli-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('resolveToolFilePath', () => {
  it('prefers --file, resolved against the working directory', () => {
    expect(resolveToolFilePath('x/tools.yaml', '/srv')).toBe('/srv/x/tools.yaml');
  });

  it('finds mci.json before mci.yaml in the working directory', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'mci.yaml'), 'schemaVersion: "1.0"\n');
    expect(resolveToolFilePath(undefined, dir)).toBe(join(dir, 'mci.yaml'));
    writeFileSync(join(dir, 'mci.json'), '{"schemaVersion":"1.0"}');
    expect(resolveToolFilePath(undefined, dir)).toBe(join(dir, 'mci.json'));
  });

  it('falls back to the example tool file', () => {
    const dir = tempDir();
    expect(resolveToolFilePath(undefined, dir)).toBe(EXAMPLE_TOOL_FILE);
    expect(EXAMPLE_TOOL_FILE.endsWith('/examples/mci.yaml')).toBe(true);
  });
});
