import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { httpClient } from './support/mcp-fixture.ts';
import { serveProcesses } from './support/serve-process.ts';

// Skills through real `mci serve` processes: a skill saved by a program survives a kill -9 and a
// restart on the same SQLite file, and MCP lists it as a tool whose call runs it.

const { dir, file: tools } = greetToolDir('mci-skills-durable-', 'Hello!');
const { serve, http } = serveProcesses(dir);

const SUM = `export default async function sum(input: { values: number[] }) {
  return input.values.reduce((a, b) => a + b, 0);
}`;

describe('skills across restarts and over MCP', () => {
  it('a saved skill survives kill -9 and a restart; MCP lists and calls it', {
    timeout: 120_000,
  }, async () => {
    const db = join(dir, 'skills.db');
    const first = serve(['--file', tools, '--db', db]);
    const url = await first.url;
    const saved = await http(url, 'POST', '/processes', {
      code: `return await skills.save({ name: 'sum', description: 'Adds numbers.', code: ${JSON.stringify(SUM)} });`,
      block: true,
    });
    expect(saved.body).toMatchObject({ status: 'success', outputs: [{ name: 'sum', version: 1 }] });
    first.child.kill('SIGKILL');
    await first.exited;

    const second = serve(['--file', tools, '--db', db]);
    const again = await second.url;
    const called = await http(again, 'POST', '/processes', {
      code: 'return await skills.sum({ values: [1, 2, 39] });',
      block: true,
    });
    expect(called.body).toMatchObject({ status: 'success', outputs: [42] });

    const client = await httpClient(again);
    const listed = await client.listTools();
    const tool = listed.tools.find((t) => t.name === 'skill_sum');
    expect(tool).toMatchObject({
      description: expect.stringMatching(/^Adds numbers\./),
      inputSchema: {
        type: 'object',
        properties: { values: { type: 'array', items: { type: 'number' } } },
        required: ['values'],
      },
    });
    const result = await client.callTool({ name: 'skill_sum', arguments: { values: [2, 3] } });
    expect(result).toMatchObject({ isError: false, structuredContent: { status: 'success', outputs: [5] } });
    const bad = await client.callTool({ name: 'skill_sum', arguments: { values: ['x'] } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toMatch(/input\.values\.0 must be number/);
    await expect(client.callTool({ name: 'skill_nothing', arguments: {} })).rejects.toThrow(/not found/);
    await client.close();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
