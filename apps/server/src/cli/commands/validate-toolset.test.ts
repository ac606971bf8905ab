import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mci } from '../../../test/support/mci.ts';

const cacheFile = fileURLToPath(
  new URL('../../../test/fixtures/tool-files/mci/mcp/filesystem.mci.json', import.meta.url),
);

describe('mci validate of a cached MCP toolset file on its own', () => {
  it('says what the file is, checks its tools and names the server the main file must declare', async () => {
    const run = await mci(['validate', '--file', cacheFile], { cwd: tmpdir() });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `${cacheFile} is a cached MCP toolset (expiresAt 2025-11-04), checked on its own: 2 tools valid\n` +
        '  its tools call MCP server "filesystem": the main file that lists this toolset declares it in mcp_servers\n',
    );
  });
});
