import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToolFile, stdioClient } from './support/mcp-fixture.ts';

// `mci mcp --filter` works as in `mci list`: the filtered-out tools are neither listed nor callable,
// directly or from run_code, and run_code's declarations leave them out.

const fixture = makeToolFile();
let client: Client;
beforeAll(async () => {
  client = await stdioClient(fixture.file, ['--filter', 'tags:text']);
});
afterAll(async () => {
  await client?.close();
  fixture.dispose();
});

describe('mci mcp --filter', () => {
  it('lists only the matching tools, and declares only them to run_code', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'describe_tool',
      'greet',
      'run_code',
      'search_tools',
    ]);
    const runCode = tools.find((tool) => tool.name === 'run_code')!;
    expect(runCode.description).toContain('greet(props');
    expect(runCode.description).not.toContain('shout(props');
  });

  it('leaves the other tools out of search_tools, describe_tool, tools.search and tools.describe', async () => {
    const found = (await client.callTool({
      name: 'search_tools',
      arguments: { query: 'upper-cases a word with a command greeting' },
    })) as CallToolResult;
    expect(found.structuredContent).toEqual({ tools: [expect.objectContaining({ name: 'greet' })] });
    const described = (await client.callTool({
      name: 'describe_tool',
      arguments: { name: 'shout' },
    })) as CallToolResult;
    expect(described.isError).toBe(true);
    const run = (await client.callTool({
      name: 'run_code',
      arguments: {
        code: `output((await tools.search('upper-cases word command greeting')).map((t) => t.name));
await tools.describe('shout');`,
      },
    })) as CallToolResult;
    expect(run.structuredContent).toMatchObject({
      status: 'failed',
      outputs: [['greet']],
      error: { message: expect.stringContaining('No tool is named "shout"') },
    });
  });

  it('refuses the other tools, directly and from run_code', async () => {
    await expect(client.callTool({ name: 'shout', arguments: { word: 'x' } })).rejects.toThrow(/not found/);
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'await tools.shout({ word: "x" })' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 'failed' });
  });
});
