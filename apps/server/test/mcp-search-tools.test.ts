import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stdioClient } from './support/mcp-fixture.ts';

// A tool file whose declarations are too long for run_code's description (200 tools, about 60 KB):
// the description says how long they are and points to the mci://tools.d.ts resource and to
// search_tools, which returns the declarations of the matching tools.

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

let client: Client;
beforeAll(async () => {
  client = await stdioClient(file);
});
afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('declarations too long for a description', () => {
  it('leaves them out of run_code and lists search_tools', async () => {
    const { tools } = await client.listTools();
    const runCode = tools.find((tool) => tool.name === 'run_code')!;
    const { contents } = await client.readResource({ uri: 'mci://tools.d.ts' });
    const dts = (contents[0] as { text: string }).text;
    expect(Buffer.byteLength(dts)).toBeGreaterThan(16 * 1024);
    expect(runCode.description).toContain(`${Buffer.byteLength(dts)} bytes`);
    expect(runCode.description).toContain('mci://tools.d.ts');
    expect(runCode.description).not.toContain('lookup_1(');
    expect(tools.map((tool) => tool.name)).toContain('search_tools');
  });

  // Words match as substrings: 'number 17' also finds 117 and 171-179.
  it('returns the declarations of the tools matching every word of the query', async () => {
    const result = (await client.callTool({
      name: 'search_tools',
      arguments: { query: 'warehouse number 17' },
    })) as CallToolResult;
    expect(result.structuredContent).toEqual({
      tools: [
        'lookup_17',
        'lookup_117',
        'lookup_171',
        'lookup_173',
        'lookup_175',
        'lookup_177',
        'lookup_179',
      ],
    });
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('lookup_17(props: {');
    expect(text).not.toContain('lookup_16(');
  });

  it('still runs programs with every tool', async () => {
    const result = (await client.callTool({
      name: 'run_code',
      arguments: { code: 'const r = await tools.lookup_199({ id: "x" }); output(r.content[0].text)' },
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ outputs: ['item x from 199'] });
  });
});
