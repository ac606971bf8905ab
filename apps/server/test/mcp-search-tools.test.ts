import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MciServer } from '../src/index.ts';
import { httpClient, makeToolFile, stdioClient } from './support/mcp-fixture.ts';

// search_tools and describe_tool through the SDK's Client: with a tool file whose declarations are
// too long for run_code's description (200 tools, about 60 KB, over stdio), and with a small one
// (over Streamable HTTP), where they are listed too.

const dir = mkdtempSync(join(tmpdir(), 'mci-mcp-search-'));
const file = join(dir, 'tools.yaml');
const filler = 'Looks something up in the inventory and returns what it finds, with its details. '.repeat(3);
writeFileSync(
  file,
  `schemaVersion: '1.0'\ntools:\n${Array.from(
    { length: 200 },
    (_, i) =>
      `  - name: lookup_${i}\n    description: ${JSON.stringify(`${i % 2 ? 'Warehouse' : 'Storefront'} lookup number ${i}. ${filler}`)}\n    inputSchema: { type: object, properties: { id: { type: string } }, required: [id] }\n    execution: { type: text, text: 'item {{props.id}} from ${i}' }\n`,
  ).join('')}`,
);
const small = makeToolFile();

let client: Client;
let server: MciServer;
let smallClient: Client;
beforeAll(async () => {
  client = await stdioClient(file);
  server = await createServer({ port: 0, file: small.file, logLevel: 'silent', concurrency: 1 });
  smallClient = await httpClient(server.url);
});
afterAll(async () => {
  await client?.close();
  await smallClient?.close();
  await server?.close({ graceMs: 0 });
  rmSync(dir, { recursive: true, force: true });
  small.dispose();
});

const call = async (on: Client, name: string, args: Record<string, unknown>) =>
  (await on.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe('declarations too long for a description', () => {
  it('leaves them out of run_code, which points to search_tools and describe_tool', async () => {
    const { tools } = await client.listTools();
    const runCode = tools.find((tool) => tool.name === 'run_code')!;
    const { contents } = await client.readResource({ uri: 'mci://tools.d.ts' });
    const dts = (contents[0] as { text: string }).text;
    expect(Buffer.byteLength(dts)).toBeGreaterThan(16 * 1024);
    expect(runCode.description).toContain(`${Buffer.byteLength(dts)} bytes`);
    expect(runCode.description).toContain('mci://tools.d.ts');
    expect(runCode.description).toContain('search_tools {query}');
    expect(runCode.description).toContain('describe_tool {name}');
    expect(runCode.description).not.toContain('lookup_1(');
  });

  it('ranks the tools that match a query, best first', async () => {
    const result = await call(client, 'search_tools', { query: 'warehouse lookup number 17', limit: 3 });
    const { tools } = result.structuredContent as { tools: Array<{ name: string; score: number }> };
    expect(tools).toHaveLength(3);
    expect(tools[0]).toEqual({
      name: 'lookup_17',
      description: expect.stringMatching(/^Warehouse lookup number 17\. /),
      score: expect.any(Number),
    });
    expect(tools[0]!.score).toBeGreaterThan(tools[1]!.score);
    expect(text(result)).toMatch(/^lookup_17 \(score [\d.]+\): Warehouse lookup number 17\./);
  });

  it("gives one tool's declaration", async () => {
    const result = await call(client, 'describe_tool', { name: 'lookup_17' });
    expect(result.structuredContent).toEqual({
      name: 'lookup_17',
      description: expect.stringMatching(/^Warehouse lookup number 17\. /),
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      declaration: expect.stringContaining('lookup_17(props: {\n  id: string;\n}): Promise<ToolResult>;'),
    });
    expect(text(result)).toBe((result.structuredContent as { declaration: string }).declaration);
  });

  it('still runs programs with every tool, and finds them from the program', async () => {
    const result = await call(client, 'run_code', {
      code: `const [best] = await tools.search('storefront number 198', { limit: 1 });
const r = await tools[best.name]({ id: 'x' });
output(r.content[0].text)`,
    });
    expect(result.structuredContent).toMatchObject({ outputs: ['item x from 198'] });
  });
});

describe('a small tool file', () => {
  it('lists search_tools and describe_tool, with input and output schemas', async () => {
    const { tools } = await smallClient.listTools();
    const search = tools.find((tool) => tool.name === 'search_tools')!;
    const describeTool = tools.find((tool) => tool.name === 'describe_tool')!;
    expect(search.inputSchema).toMatchObject({
      required: ['query'],
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
    });
    expect(search.outputSchema?.required).toEqual(['tools']);
    expect(search.annotations).toMatchObject({ readOnlyHint: true });
    expect(describeTool.inputSchema).toMatchObject({ required: ['name'] });
    expect(describeTool.outputSchema?.required).toEqual(['name', 'inputSchema', 'declaration']);
  });

  it('finds a tool by a word of its description, and describes it', async () => {
    const found = await call(smallClient, 'search_tools', { query: 'greeting' });
    expect(found.structuredContent).toEqual({
      tools: [{ name: 'greet', description: 'Returns a greeting for name.', score: expect.any(Number) }],
    });
    const described = await call(smallClient, 'describe_tool', { name: 'greet' });
    expect(described.structuredContent).toMatchObject({
      name: 'greet',
      annotations: { readOnlyHint: true, openWorldHint: false },
      declaration:
        '/** Returns a greeting for name. */\ngreet(props: {\n  name: string;\n}): Promise<ToolResult>;\n',
    });
  });

  it('answers no match with an empty list', async () => {
    const result = await call(smallClient, 'search_tools', { query: 'zzzz qqqq' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ tools: [] });
    expect(text(result)).toBe('No tool matches "zzzz qqqq".');
  });

  it.each([
    [{ query: '' }, 'search_tools: query must not be empty'],
    [{}, 'search_tools: query must be a string, not undefined'],
    [{ query: 'greet', limit: 0 }, 'search_tools: limit must be an integer from 1 to 100, not 0'],
    [{ query: 'greet', limit: 1000 }, 'search_tools: limit must be an integer from 1 to 100, not 1000'],
    [{ query: 'greet', max: 3 }, 'search_tools: unknown argument "max"'],
  ])('refuses search_tools %j with a clear error', async (args, message) => {
    const result = await call(smallClient, 'search_tools', args);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(message);
  });

  it('refuses describe_tool of an unknown name, naming the close ones', async () => {
    const result = await call(smallClient, 'describe_tool', { name: 'greets' });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'describe_tool: No tool is named "greets". Did you mean "greet"? search_tools {query} finds tools by what they do.',
    );
    const empty = await call(smallClient, 'describe_tool', {});
    expect(text(empty)).toBe('describe_tool: name must be a non-empty string');
  });
});
