// The first `run_code` of a fresh server waits for its sandbox workers and its checker to start; the
// run's `durationMs` is the program's own time all the same (from when its isolate started it).
// Measured: that `durationMs` against the wall time of the whole first call, over MCP on a fresh
// in-process server each time. Target: the duration counts none of the start-up (ratio well below 1).

import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type BenchResult, compared } from '../../../bench/lib.ts';
import { createServer } from '../src/server.ts';

const toolFile = fileURLToPath(new URL('../../../examples/mci.yaml', import.meta.url));
const SERVERS = 5;

/** The median of `values`. */
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export default async function bench(): Promise<BenchResult[]> {
  const walls: number[] = [];
  const durations: number[] = [];
  for (let i = 0; i < SERVERS; i++) {
    await using server = await createServer({ port: 0, file: toolFile, logLevel: 'silent' });
    const client = new Client({ name: 'first-run-bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url)));
    try {
      const started = performance.now();
      const result = (await client.callTool({
        name: 'run_code',
        arguments: { code: 'output(1 + 1)' },
      })) as CallToolResult;
      walls.push(performance.now() - started);
      const content = result.structuredContent as { status: string; durationMs: number };
      if (content.status !== 'success') throw new Error(`the first run ended ${content.status}`);
      durations.push(content.durationMs);
    } finally {
      await client.close();
    }
  }
  return [
    compared(
      'first run_code of a fresh server: durationMs (median)',
      median(durations),
      'ms',
      { name: 'the whole first call (wall, median)', value: median(walls) },
      'ratio well below 1',
    ),
  ];
}
