import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { mcpSuiteServer, suiteClient } from './support/mcp-fixture.ts';

// run_code and the MCI tools through the SDK's own Client, over stdio (`mci mcp` spawned) and over
// Streamable HTTP (`/mcp` of a server on port 0): the same cases on both transports.

const suite = mcpSuiteServer({ concurrency: 1 });

const { transports } = suite;

const text = (result: CallToolResult) =>
  result.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');

describe.each(transports)('MCP over %s', (_name, connect) => {
  const mcp = suiteClient(connect);

  const runCode = async (code: string, extra: Record<string, unknown> = {}) =>
    (await mcp.client.callTool({ name: 'run_code', arguments: { code, ...extra } })) as CallToolResult;

  it('lists run_code and every tool with annotations, _meta tags and task support', async () => {
    const { tools } = await mcp.client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual([
      'describe_tool',
      'get-resource-reference',
      'get-tiny-image',
      'greet',
      'run_code',
      'search_tools',
      'shout',
    ]);
    const runCodeTool = byName.get('run_code')!;
    expect(runCodeTool.execution?.taskSupport).toBe('optional');
    expect(runCodeTool.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(runCodeTool.outputSchema?.required).toContain('outputs');
    // The declarations of every tool, the same text as GET /tools.d.ts.
    const dts = await (await fetch(`${suite.server.url}/tools.d.ts`)).text();
    expect(runCodeTool.description).toContain(dts);
    expect(byName.get('greet')).toMatchObject({
      title: 'Greet someone',
      annotations: { readOnlyHint: true, openWorldHint: false },
      execution: { taskSupport: 'forbidden' },
      _meta: { 'mci/tags': ['text', 'demo'], 'mci/execution': 'text' },
    });
    expect(byName.get('shout')?.execution?.taskSupport).toBe('optional');
    expect(byName.get('get-tiny-image')?.execution?.taskSupport).toBe('optional');
  });

  it('reads the declarations as the mci://tools.d.ts resource', async () => {
    const { contents } = await mcp.client.readResource({ uri: 'mci://tools.d.ts' });
    expect(contents[0]).toMatchObject({ uri: 'mci://tools.d.ts', mimeType: 'application/typescript' });
    expect((contents[0] as { text: string }).text).toContain('greet(props: {');
  });

  it('runs code: outputs, stdout and the structured result', async () => {
    const result = await runCode('output(1 + 1); console.log("hi")');
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({
      status: 'success',
      outputs: [2],
      stdout: 'hi\n',
      run: 1,
    });
    expect(text(result)).toContain('output: 2');
  });

  it('reports a throw with its line', async () => {
    const result = await runCode('const a = 1;\nthrow new Error("boom " + a);');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: 'failed',
      error: { name: 'Error', message: 'boom 1', line: 2 },
    });
    expect(text(result)).toContain('error (line 2');
  });

  it('stops a run at its timeout', async () => {
    const result = await runCode('for (;;) {}', { timeoutMs: 300 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 'timeout' });
    expect(text(result)).toContain('timeout');
  });

  it('calls a tool inside the program', async () => {
    const result = await runCode('const r = await tools.greet({ name: "Ada" }); output(r.content[0].text)');
    expect(result.structuredContent).toMatchObject({ status: 'success', outputs: ['Hello, Ada.'] });
  });

  it('returns every kind of output value in the output encoding (docs/protocol.md)', async () => {
    const result = await runCode(
      [
        'output(42); output("text"); output(true); output(null); output([1, "two"]);',
        'output({ a: { b: 1 } }); output(new Map([["k", 1]])); output(new Set([1, 2]));',
        'output(10n); output(new Uint8Array([1, 2])); output(undefined); return "done";',
      ].join('\n'),
    );
    expect(result.isError).toBe(false);
    expect((result.structuredContent as { outputs: unknown[] }).outputs).toEqual([
      42,
      'text',
      true,
      null,
      [1, 'two'],
      { a: { b: 1 } },
      { $type: 'Map', entries: [['k', 1]] },
      { $type: 'Set', values: [1, 2] },
      { $type: 'bigint', value: '10' },
      { $type: 'Uint8Array', base64: 'AQI=' },
      { $type: 'undefined' },
      'done',
    ]);
  });

  it('calls a text tool directly', async () => {
    const result = (await mcp.client.callTool({
      name: 'greet',
      arguments: { name: 'Ada' },
    })) as CallToolResult;
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Hello, Ada.' }] });
  });

  it('passes a tool failure through as an isError result', async () => {
    const result = (await mcp.client.callTool({ name: 'greet', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Tool greet failed: .*name/);
  });

  it('calls a cli tool directly', async () => {
    const result = (await mcp.client.callTool({
      name: 'shout',
      arguments: { word: 'hey' },
    })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(text(result)).toContain('HEY');
    expect(result._meta?.['mci/metadata']).toMatchObject({ exit_code: 0 });
  });

  it('passes the image content of an MCP-sourced tool through', async () => {
    const result = (await mcp.client.callTool({ name: 'get-tiny-image', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(false);
    const image = result.content.find((item) => item.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(
      Buffer.from((image as { data: string }).data, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  });

  it('passes an embedded resource of an MCP-sourced tool through', async () => {
    const result = (await mcp.client.callTool({
      name: 'get-resource-reference',
      arguments: { resourceType: 'Text', resourceId: 2 },
    })) as CallToolResult;
    expect(result.isError).toBe(false);
    const embedded = result.content.find((item) => item.type === 'resource');
    expect(embedded).toMatchObject({ type: 'resource', resource: { uri: expect.stringContaining('2') } });
    expect((embedded as { resource: { text?: string } }).resource.text).toEqual(expect.any(String));
  });

  it('rejects an unknown tool and bad run_code arguments as protocol errors, each message prefixed once', async () => {
    await expect(mcp.client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: 'MCP error -32602: Tool nope not found',
    });
    await expect(mcp.client.callTool({ name: 'run_code', arguments: { code: 1 } })).rejects.toMatchObject({
      code: -32602,
      message: 'MCP error -32602: run_code: code must be a non-empty string',
    });
    // The SDK's own task handlers' errors too.
    await expect(mcp.client.experimental.tasks.getTask('process-999999')).rejects.toMatchObject({
      code: -32602,
      message: expect.not.stringMatching(/MCP error -32602: MCP error/),
    });
  });

  it('lists no resource templates (every resource is listed)', async () => {
    expect(await mcp.client.listResourceTemplates()).toMatchObject({ resourceTemplates: [] });
  });
});
