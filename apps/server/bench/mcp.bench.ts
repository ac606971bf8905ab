// run_code of `output(1 + 1)` over MCP (stdio: `mci mcp` spawned; Streamable HTTP: `/mcp` of a
// server on port 0) against the same program over the WebSocket API of that server, in one run:
// p50/p99 with one caller (the paths alternate call by call) and throughput with 8 callers. A second
// baseline, the HTTP API's `POST /processes` with `block: true`, shows what one HTTP request costs.
// Target: MCP adds under 1 ms p50 over WebSocket.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createServer } from '../src/server.ts';
import { BenchClient, LOAD_TEST_SERVER, loadTest } from './ws-bench-client.ts';

const program = 'output(1 + 1)';
const toolFile = fileURLToPath(new URL('../../../examples/mci.yaml', import.meta.url));
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const WORKERS = 2;

async function mcpRun(client: Client): Promise<void> {
  const result = (await client.callTool({
    name: 'run_code',
    arguments: { code: program },
  })) as CallToolResult;
  if (result.isError) throw new Error(`run_code failed: ${JSON.stringify(result.content)}`);
}

export default async function bench(): Promise<BenchResult[]> {
  await using server = await createServer({
    // The per-principal HTTP rate limit would cap the MCP path, not the WebSocket one.
    ...LOAD_TEST_SERVER,
    file: toolFile,
    concurrency: WORKERS,
  });
  const callers = 8;
  const ws = await Promise.all(Array.from({ length: callers }, () => BenchClient.open(server.wsUrl)));
  const info = { name: 'mci-bench', version: '1.0.0' };
  const http = await Promise.all(
    Array.from({ length: callers }, async () => {
      const client = new Client(info);
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url)));
      return client;
    }),
  );
  const stdio = new Client(info);
  await stdio.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        '--conditions=@mci/source',
        '--disable-warning=ExperimentalWarning',
        main,
        'mcp',
        '--file',
        toolFile,
        '--concurrency',
        String(WORKERS),
      ],
      env: { ...process.env, MCI_LOG_LEVEL: 'silent' } as Record<string, string>,
      stderr: 'ignore',
    }),
  );

  const rest = async () => {
    const response = await fetch(`${server.url}/processes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: program, block: true }),
    });
    if (!response.ok) throw new Error(`POST /processes: ${response.status}`);
    await response.json();
  };
  const paths = {
    ws: (c = 0) => ws[c]!.create(program),
    rest: () => rest(),
    http: (c = 0) => mcpRun(http[c]!),
    stdio: () => mcpRun(stdio),
  };
  // Warm every worker on every path.
  for (const job of Object.values(paths)) await loadTest(WORKERS * 2, 1500, (c) => job(c));

  // One caller: the three paths alternate call by call so they see the same machine state.
  const one = { ws: [] as number[], rest: [] as number[], http: [] as number[], stdio: [] as number[] };
  const stopAt = performance.now() + 8000;
  while (performance.now() < stopAt) {
    for (const key of ['ws', 'rest', 'http', 'stdio'] as const) {
      const t = performance.now();
      await paths[key]();
      one[key].push(performance.now() - t);
    }
  }

  // `callers` concurrent callers (stdio: one client, requests in flight at once); rounds alternate.
  const rate = {
    ws: { count: 0, seconds: 0 },
    http: { count: 0, seconds: 0 },
    stdio: { count: 0, seconds: 0 },
  };
  for (let round = 0; round < 3; round++) {
    for (const key of ['ws', 'http', 'stdio'] as const) {
      const run = await loadTest(callers, 1500, (c) => paths[key](c));
      rate[key].count += run.samples.length;
      rate[key].seconds += run.seconds;
    }
  }
  for (const client of ws) client.close();
  await Promise.all([...http, stdio].map((client) => client.close()));

  const p = (samples: number[], q: number) => percentile(samples, q);
  const perSecond = (key: keyof typeof rate) => rate[key].count / rate[key].seconds;
  const wsBase = (q: number) => ({ name: `ws p${q}, 1 caller`, value: p(one.ws, q) });
  const results: BenchResult[] = [
    compared('HTTP API POST /processes (block) p50, 1 caller', p(one.rest, 50), 'ms', wsBase(50)),
  ];
  for (const [key, label] of [
    ['http', 'MCP Streamable HTTP'],
    ['stdio', 'MCP stdio'],
  ] as const) {
    results.push(
      compared(`${label} run_code p50, 1 caller`, p(one[key], 50), 'ms', wsBase(50), 'ws + < 1 ms'),
      compared(`${label} run_code p99, 1 caller`, p(one[key], 99), 'ms', wsBase(99)),
      {
        name: `${label} overhead p50 over ws`,
        value: p(one[key], 50) - p(one.ws, 50),
        unit: 'ms',
        target: '< 1 ms',
      },
      compared(`${label} throughput, ${callers} callers`, perSecond(key), 'runs/s', {
        name: `ws throughput, ${callers} callers`,
        value: perSecond('ws'),
      }),
    );
  }
  return results;
}
