// Finding tools among 1,000 (text tools with generated descriptions):
// 1. Building the catalog (the MiniSearch index) once for the tool file.
// 2. One search of the catalog, p50 and p99 over queries of one to four words.
// 3. tools.search from a program: 200 searches in one run, per search (sandbox -> host -> sandbox),
//    against 200 calls of a text tool (the same round trip, and the tool's template).
// 4. The generated system prompt: /tools.d.ts rendered and cut to the default tool prompt budget.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSystemPrompt } from '@mci/agent';
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import { createServer } from '../src/server.ts';
import { createToolCatalog } from '../src/tool-search/tool-catalog.ts';
import { renderSandboxGlobals } from '../src/tools-dts/sandbox-globals-dts.ts';
import { describeTool, teamOf } from '../test/support/generated-tools.ts';

const TOOLS = Array.from({ length: 1000 }, (_, i) => ({
  name: `tool_${i}`,
  description: `${describeTool(i).slice(0, -1)}, with their details and history.`,
  tags: ['generated', teamOf(i)],
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string' }, limit: { type: 'integer' } },
    required: ['id'],
  },
}));
const QUERIES = [
  'invoices',
  'archive shipments finance',
  'send alerts to the security team',
  'tool_42',
  'contracts legal',
  'hiring',
];

export default async function bench(): Promise<BenchResult[]> {
  const builds = await sample(() => createToolCatalog(TOOLS), 2000, 3);
  const catalog = createToolCatalog(TOOLS);
  let q = 0;
  const searches = await sample(() => catalog.search(QUERIES[q++ % QUERIES.length]!, 10), 2000, 50);
  const prompts = await sample(() => buildSystemPrompt({ toolsDts: renderSandboxGlobals(TOOLS) }), 2000, 3);
  return [
    { name: 'tool catalog build, 1,000 tools (p50)', value: percentile(builds, 50), unit: 'ms' },
    {
      name: 'tool catalog search, 1,000 tools (p50)',
      value: percentile(searches, 50) * 1000,
      unit: 'us',
      target: '< 1 ms',
    },
    { name: 'tool catalog search, 1,000 tools (p99)', value: percentile(searches, 99) * 1000, unit: 'us' },
    await fromProgram(),
    { name: 'system prompt of 1,000 tools (render + budget)', value: percentile(prompts, 50), unit: 'ms' },
  ];
}

/** Milliseconds per `tools.search` in a program that makes 200 of them (median of 5 runs), against a tool call. */
async function fromProgram(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-bench-tool-search-'));
  const file = join(dir, 'tools.yaml');
  writeFileSync(
    file,
    `schemaVersion: '1.0'\ntools:\n${TOOLS.map(
      (tool) =>
        `  - name: ${tool.name}\n    description: ${JSON.stringify(tool.description)}\n    execution: { type: text, text: 'ok' }\n`,
    ).join('')}`,
  );
  await using server = await createServer({ port: 0, file, logLevel: 'silent', concurrency: 1 });
  const timed = (call: string) => `const queries = ${JSON.stringify(QUERIES)};
const started = Date.now();
for (let i = 0; i < 200; i++) await ${call};
return (Date.now() - started) / 200;`;
  const perCall = async (code: string) => {
    const samples: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${server.url}/processes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code, block: true, timeoutMs: 60_000 }),
      });
      const body = (await response.json()) as { outputs?: unknown[] };
      const value = body.outputs?.[0];
      if (typeof value !== 'number') throw new Error(`unexpected answer: ${JSON.stringify(body)}`);
      if (i > 0) samples.push(value);
    }
    return percentile(samples, 50);
  };
  try {
    const search = await perCall(timed('tools.search(queries[i % queries.length])'));
    const call = await perCall(timed("tools.tool_1({ id: 'x' })"));
    return compared('tools.search from a program, 1,000 tools', search, 'ms per call', {
      name: 'a text tool call',
      value: call,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
