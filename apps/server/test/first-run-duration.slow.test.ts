import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { examplePath } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/index.ts';
import { httpClient, stdioClient } from './support/mcp-fixture.ts';

// The first run of a fresh server waits for its sandbox workers to start; its durationMs is the
// program's own time all the same (from when its isolate started it). No speed is asserted: the
// worker start-up is long beside `output(1 + 1)`, so a duration that counts it is most of the call.

const firstCall = async (client: Awaited<ReturnType<typeof stdioClient>>) => {
  const started = performance.now();
  const result = (await client.callTool({
    name: 'run_code',
    arguments: { code: 'output(1 + 1)' },
  })) as CallToolResult;
  return { wallMs: performance.now() - started, result: result.structuredContent as Record<string, unknown> };
};

describe('the first run of a fresh server', () => {
  it('mci mcp: durationMs does not count the sandbox workers starting', async () => {
    const client = await stdioClient(examplePath('mci.yaml'));
    try {
      const { wallMs, result } = await firstCall(client);
      expect(result).toMatchObject({ status: 'success', outputs: [2] });
      expect(result.durationMs as number).toBeLessThan(wallMs / 2);
    } finally {
      await client.close();
    }
  });

  it('mci serve (/mcp): durationMs counts neither the workers starting nor the check', async () => {
    await using server = await createServer({ port: 0, file: examplePath('mci.yaml'), logLevel: 'silent' });
    const client = await httpClient(server.url);
    try {
      const { wallMs, result } = await firstCall(client);
      expect(result).toMatchObject({ status: 'success', outputs: [2] });
      expect(result.durationMs as number).toBeLessThan(wallMs / 2);
    } finally {
      await client.close();
    }
  });
});
