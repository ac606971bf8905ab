/**
 * Tool execution benchmark (issue 3): executions per second and p50/p99 latency of a `text` tool, an
 * `http` tool against a local keep-alive server, and an `mcp` tool against server-everything (stdio);
 * the http and mcp tools next to the same operation done directly (a bare undici request; a bare MCP
 * SDK `callTool`), measured in the same run, interleaved round by round (after a warm-up of both) so drift hits both alike.
 * Target: our overhead over the raw operation under 10% for http and mcp. One more http row compares
 * with a direct request that also carries a timeout signal and parses the JSON, to show how much of
 * the overhead is those features rather than the runner.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Agent, request } from 'undici';
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import { createToolRunner, loadTools, type ToolRunner } from '../src/index.ts';

const ROUNDS = 24;
const ROUND_MS = 150;
/** Warm-up time per operation, in ms, so both run optimised code before sampling. */
const WARMUP_MS = 1500;

/**
 * Samples two operations in alternating rounds (which goes first alternates too) after warming
 * both up; returns the latency samples (ms) of each. Short, many rounds spread the load of a shared
 * machine over both sides.
 */
async function interleaved(ours: () => Promise<unknown>, bare: () => Promise<unknown>) {
  const a: number[] = [];
  const b: number[] = [];
  await sample(bare, WARMUP_MS, 0);
  await sample(ours, WARMUP_MS, 0);
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      b.push(...(await sample(bare, ROUND_MS, 10)));
      a.push(...(await sample(ours, ROUND_MS, 10)));
    } else {
      a.push(...(await sample(ours, ROUND_MS, 10)));
      b.push(...(await sample(bare, ROUND_MS, 10)));
    }
  }
  return { ours: a, bare: b };
}

const opsPerSecond = (samples: number[]) => 1000 / (samples.reduce((sum, s) => sum + s, 0) / samples.length);

/** Rows for one operation: ops/s, p50 and p99 compared with the bare operation, and the overhead. */
function rows(label: string, bareLabel: string, samples: { ours: number[]; bare: number[] }): BenchResult[] {
  const oursP50 = percentile(samples.ours, 50) * 1000;
  const bareP50 = percentile(samples.bare, 50) * 1000;
  return [
    compared(`${label}: executions/s`, opsPerSecond(samples.ours), 'ops/s', {
      name: bareLabel,
      value: opsPerSecond(samples.bare),
    }),
    compared(
      `${label}: p50 latency`,
      oursP50,
      'us',
      { name: bareLabel, value: bareP50 },
      '< 1.10 x baseline',
    ),
    compared(`${label}: p99 latency`, percentile(samples.ours, 99) * 1000, 'us', {
      name: bareLabel,
      value: percentile(samples.bare, 99) * 1000,
    }),
    {
      name: `${label}: overhead over ${bareLabel} (p50)`,
      value: ((oursP50 - bareP50) / bareP50) * 100,
      unit: '%',
      target: '< 10%',
    },
  ];
}

function check(result: { isError: boolean; error?: string }, what: string): void {
  if (result.isError) throw new Error(`${what} failed: ${result.error}`);
}

export default async function toolsBench(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mci-tools-bench-'));
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"items":[1,2,3]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data`;
  const everything = createRequire(import.meta.url).resolve(
    '@modelcontextprotocol/server-everything/dist/index.js',
  );

  const file = join(dir, 'mci.json');
  await writeFile(
    file,
    JSON.stringify({
      schemaVersion: '1.0',
      tools: [
        {
          name: 'greet',
          inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          execution: { type: 'text', text: 'Hello {{props.name}}, welcome to {{env.BENCH_PLACE | "MCI"}}!' },
        },
        {
          name: 'fetch',
          inputSchema: { type: 'object', properties: { id: { type: 'integer' } } },
          execution: { type: 'http', url, params: { id: '{!!props.id!!}' } },
        },
      ],
      mcp_servers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
    }),
  );

  const runner: ToolRunner = createToolRunner(await loadTools(file));
  const agent = new Agent();
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'] }));
  try {
    check(await runner.execute('greet', { name: 'Ada' }), 'text tool');
    check(await runner.execute('fetch', { id: 7 }), 'http tool');
    check(await runner.execute('echo', { message: 'hi' }), 'mcp tool');

    const text = await sample(() => runner.execute('greet', { name: 'Ada' }), 2000, 500);

    const http = await interleaved(
      () => runner.execute('fetch', { id: 7 }),
      async () => {
        const response = await request(`${url}?id=7`, { dispatcher: agent });
        return response.body.text();
      },
    );
    // The same request done directly with what the tool adds on top: a timeout signal (which also
    // carries cancellation) and JSON parsing for structuredContent. Shows where the overhead goes.
    const equipped = await interleaved(
      () => runner.execute('fetch', { id: 7 }),
      async () => {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), 30_000);
        try {
          const response = await request(`${url}?id=7`, { dispatcher: agent, signal: controller.signal });
          return JSON.parse(await response.body.text());
        } finally {
          clearTimeout(timer);
        }
      },
    );
    const mcp = await interleaved(
      () => runner.execute('echo', { message: 'hi' }),
      () => client.callTool({ name: 'echo', arguments: { message: 'hi' } }),
    );

    return [
      { name: 'text tool: executions/s', value: opsPerSecond(text), unit: 'ops/s' },
      { name: 'text tool: p50 latency', value: percentile(text, 50) * 1000, unit: 'us' },
      { name: 'text tool: p99 latency', value: percentile(text, 99) * 1000, unit: 'us' },
      ...rows('http tool', 'bare undici request', http),
      compared(
        'http tool: p50 latency vs an equally equipped request',
        percentile(equipped.ours, 50) * 1000,
        'us',
        { name: 'undici request + timeout signal + JSON.parse', value: percentile(equipped.bare, 50) * 1000 },
      ),
      ...rows('mcp tool', 'bare MCP SDK callTool', mcp),
    ];
  } finally {
    await runner.close();
    await client.close();
    await agent.close();
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
