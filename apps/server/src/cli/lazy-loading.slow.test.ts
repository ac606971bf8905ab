import { examplePath, modulesLoadedBy } from '@mci/test-support';
import { describe, expect, it } from 'vitest';

// `mci` loads only what the command it runs needs: `--help` no command at all, the tool-file
// commands neither the sandbox, the server nor the MCP SDK.

const heavy = (urls: string[]) =>
  urls.filter((url) =>
    /\/packages\/sandbox\/|isolated-vm|@modelcontextprotocol|\/apps\/server\/src\/(server|listener)\.ts/.test(
      url,
    ),
  );

describe('what mci loads', () => {
  it('mci --help loads no command module', async () => {
    const loaded = await modulesLoadedBy(['--help']);
    expect(loaded.some((url) => url.endsWith('/cli/main.ts'))).toBe(true);
    expect(loaded.filter((url) => url.includes('/cli/commands/') && !url.endsWith('/index.ts'))).toEqual([]);
    expect(heavy(loaded)).toEqual([]);
  });

  it('mci validate loads neither the sandbox, the server nor the MCP SDK', async () => {
    const loaded = await modulesLoadedBy(['validate', '--file', examplePath('mci.yaml')]);
    expect(loaded.some((url) => url.endsWith('/cli/commands/validate.ts'))).toBe(true);
    expect(heavy(loaded)).toEqual([]);
  });

  it('mci serve --help does load the server and the sandbox (the check sees what it looks for)', async () => {
    const loaded = await modulesLoadedBy(['serve', '--help']);
    expect(heavy(loaded).some((url) => url.endsWith('/apps/server/src/server.ts'))).toBe(true);
    expect(heavy(loaded).some((url) => url.includes('/packages/sandbox/'))).toBe(true);
    expect(loaded.some((url) => url.includes('/packages/agent/'))).toBe(true);
  });

  it('mci serve without --model loads no model SDK', async () => {
    const loaded = await modulesLoadedBy(['serve', '--help']);
    expect(loaded.filter((url) => /\/node_modules\/(openai|@anthropic-ai)\//.test(url))).toEqual([]);
  });
});
