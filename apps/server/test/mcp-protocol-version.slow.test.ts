import { afterAll, describe, expect, it } from 'vitest';
import { makeToolFile } from './support/mcp-fixture.ts';
import { spawnMci } from '@mci/test-support';

// A client that negotiates an MCP version before tasks (2025-06-18) gets the synchronous behaviour: a
// `task` field in its tools/call is ignored and the call answers with the tool result, as the spec
// requires. Raw JSON-RPC lines on `mci mcp`'s stdin, as such a client writes them.

const fixture = makeToolFile();
afterAll(() => fixture.dispose());

const lines = (version: string) =>
  [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'run_code', arguments: { code: 'output(6 * 7)' }, task: { ttl: 1000 } },
    },
  ]
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('');

async function answers(version: string): Promise<Map<number, Record<string, any>>> {
  const run = await spawnMci(['mcp', '--file', fixture.file], { cwd: fixture.dir, input: lines(version) });
  expect(run.code, run.stderr).toBe(0);
  const messages = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, any>);
  return new Map(messages.filter((m) => m.id !== undefined).map((m) => [m.id as number, m]));
}

describe('protocol version negotiation', () => {
  it('runs a task-augmented call synchronously for a client of 2025-06-18', async () => {
    const replies = await answers('2025-06-18');
    expect(replies.get(1)?.result.protocolVersion).toBe('2025-06-18');
    expect(replies.get(2)?.result).toMatchObject({ isError: false, structuredContent: { outputs: [42] } });
    expect(replies.get(2)?.result.task).toBeUndefined();
  });

  it('creates a task for a client of 2025-11-25', async () => {
    const replies = await answers('2025-11-25');
    expect(replies.get(2)?.result.task).toMatchObject({
      status: 'working',
      taskId: expect.stringMatching(/^process-/),
    });
  });
});
