import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mciArgv } from '@mci/test-support';
import { makeToolFile } from './support/mcp-fixture.ts';

// The MCP Inspector's CLI mode (from the npm registry, a dev dependency) drives `mci mcp` as a user
// would: it lists the tools and calls run_code and a tool directly.

const require = createRequire(import.meta.url);
const INSPECTOR = join(
  dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
);
const fixture = makeToolFile();
afterAll(() => fixture.dispose());

function inspector(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const server = [process.execPath, ...mciArgv([])];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', ...server, 'mcp', '--file', fixture.file, '--', ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr }),
    );
  });
}

// Each inspector run starts Node three times (inspector, mci mcp, the everything server): slow on a busy machine.
describe('the MCP Inspector CLI against mci mcp', { timeout: 90_000 }, () => {
  it('lists the tools', async () => {
    const run = await inspector('--method', 'tools/list');
    expect(run.code, run.stderr).toBe(0);
    const names = (JSON.parse(run.stdout) as { tools: Array<{ name: string }> }).tools.map(
      (tool) => tool.name,
    );
    expect(names).toEqual(expect.arrayContaining(['run_code', 'greet', 'shout', 'get-tiny-image']));
  });

  it('calls run_code and a tool', async () => {
    const run = await inspector(
      '--method',
      'tools/call',
      '--tool-name',
      'run_code',
      '--tool-arg',
      'code=output(1 + 1)',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ isError: false, structuredContent: { outputs: [2] } });
    const greet = await inspector('--method', 'tools/call', '--tool-name', 'greet', '--tool-arg', 'name=Ada');
    expect(JSON.parse(greet.stdout)).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada.' }] });
  });
});
