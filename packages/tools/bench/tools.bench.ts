/**
 * Tool execution benchmark: executions per second and p50/p99 latency of a `text` tool, an `http`
 * tool against a local keep-alive server, and an `mcp` tool against server-everything (stdio); the
 * http and mcp tools next to the same operation done directly (a bare undici `request()`; a bare MCP
 * SDK `callTool`), measured in the same run, interleaved round by round (after a warm-up of both) so
 * drift hits both alike; the mcp pair on several pairs of fresh server processes (see MCP_PAIRS).
 * Target: our overhead over the raw operation under 10% for http and mcp. Two more http rows, for
 * reference: a direct request that also carries a timeout signal and parses the JSON (what the tool
 * adds on top), and the leanest use of undici, a dispatch handler that only collects the body.
 * Numbers and their history: docs/notes/tools-performance.md.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Agent, type Dispatcher, request } from 'undici';
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import type { ToolCollection } from '@mci/schema';
import { createToolRunner, loadTools, type ToolRunner } from '../src/index.ts';

const ROUNDS = 24;
const ROUND_MS = 150;
/** Warm-up time per operation, in ms, so both run optimised code before sampling. */
const WARMUP_MS = 1500;
/**
 * The mcp comparison runs on this many pairs of fresh stdio servers (one per side, started in
 * alternating order), ROUNDS / MCP_PAIRS rounds each: one pair of server processes can be faster or
 * slower than the next, which one pair alone would charge to one side.
 */
const MCP_PAIRS = 6;
/** Warm-up per side per mcp pair, in ms: each new server process starts cold. */
const MCP_WARMUP_MS = 1000;

/**
 * Samples two operations in alternating rounds (which goes first alternates too) after warming
 * both up; returns the latency samples (ms) of each. Short, many rounds spread the load of a shared
 * machine over both sides.
 */
async function interleaved(
  ours: () => Promise<unknown>,
  bare: () => Promise<unknown>,
  rounds = ROUNDS,
  warmupMs = WARMUP_MS,
) {
  const a: number[] = [];
  const b: number[] = [];
  await sample(bare, warmupMs, 0);
  await sample(ours, warmupMs, 0);
  for (let round = 0; round < rounds; round++) {
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

/**
 * The mcp tool against a bare SDK client, on {@link MCP_PAIRS} pairs of fresh server-everything
 * processes; the samples of all pairs together.
 */
async function mcpInPairs(collection: ToolCollection, everything: string) {
  const all = { ours: [] as number[], bare: [] as number[] };
  for (let pair = 0; pair < MCP_PAIRS; pair++) {
    const runner = createToolRunner(collection);
    const client = new Client({ name: 'bench', version: '1.0.0' });
    // Piped like the runner's, so the two server processes run alike.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [everything, 'stdio'],
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => {});
    try {
      const startOurs = async () => check(await runner.execute('echo', { message: 'hi' }), 'mcp tool');
      if (pair % 2 === 0) {
        await startOurs();
        await client.connect(transport);
      } else {
        await client.connect(transport);
        await startOurs();
      }
      const samples = await interleaved(
        () => runner.execute('echo', { message: 'hi' }),
        () => client.callTool({ name: 'echo', arguments: { message: 'hi' } }),
        ROUNDS / MCP_PAIRS,
        MCP_WARMUP_MS,
      );
      all.ours.push(...samples.ours);
      all.bare.push(...samples.bare);
    } finally {
      await runner.close();
      await client.close();
    }
  }
  return all;
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

/** A GET through undici's dispatch-handler API: the body's chunks collected and decoded, nothing else. */
function dispatchText(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    dispatcher.dispatch(options, {
      onRequestStart: () => {},
      onResponseStart: () => {},
      onResponseData: (_controller, chunk) => {
        chunks.push(chunk);
      },
      onResponseEnd: () => resolve(Buffer.concat(chunks).toString('utf8')),
      onResponseError: (_controller, error) => reject(error),
    });
  });
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

  const collection = await loadTools(file);
  const runner: ToolRunner = createToolRunner(collection);
  const agent = new Agent();
  try {
    check(await runner.execute('greet', { name: 'Ada' }), 'text tool');
    check(await runner.execute('fetch', { id: 7 }), 'http tool');

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
    // undici's low-level API with nothing on top: no Readable, no timeout, no JSON parsing.
    const origin = new URL(url).origin;
    const lean = await interleaved(
      () => runner.execute('fetch', { id: 7 }),
      () => dispatchText(agent, { origin, path: '/data?id=7', method: 'GET' }),
    );
    const mcp = await mcpInPairs(collection, everything);

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
      compared('http tool: p50 latency vs a bare undici dispatch', percentile(lean.ours, 50) * 1000, 'us', {
        name: 'undici dispatch handler collecting the body',
        value: percentile(lean.bare, 50) * 1000,
      }),
      ...rows('mcp tool', 'bare MCP SDK callTool', mcp),
    ];
  } finally {
    await runner.close();
    await agent.close();
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
