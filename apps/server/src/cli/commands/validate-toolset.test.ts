import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

const cacheFile = fileURLToPath(
  new URL('../../../test/fixtures/tool-files/mci/mcp/filesystem.mci.json', import.meta.url),
);

// A working directory that holds nothing of the checkout, so the file is printed as given.
const cwd = mkdtempSync(join(tmpdir(), 'mci-validate-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('mci validate of a cached MCP toolset file on its own', () => {
  it('says what the file is, checks its tools and names the server the main file must declare', async () => {
    const run = await mci(['validate', '--file', cacheFile], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `${cacheFile} is a cached MCP toolset (expiresAt 2025-11-04), checked on its own: 2 tools valid\n` +
        '  its tools call MCP server "filesystem": the main file that lists this toolset declares it in mcp_servers\n',
    );
  });
});
