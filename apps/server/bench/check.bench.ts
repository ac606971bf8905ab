// The check before running, in one run:
// 1. The compiler alone (`ProgramChecker` in this thread): the cold first check of a fresh checker,
//    then p50/p99 of a 30-line program against 9 tools and against 300 tools (target: p50 < 15 ms).
// 2. Through the worker thread (`createChecker`): the time from start to the first report (cold),
//    and p50/p99 of one check (the message round trip included).
// 3. A whole server: a blocking run of a small program with `check: block` against `check: off`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChecker, ProgramChecker } from '@mci/check';
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import { checkDeclarations } from '../src/check/check-declarations.ts';
import { createServer, type MciServer } from '../src/server.ts';
import type { ToolDeclarationSource } from '../src/tools-dts/sandbox-globals-dts.ts';

/** `count` tools with three input properties each (two required); every third forbids extra ones. */
function toolSources(count: number): ToolDeclarationSource[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `tool_${i}`,
    description: `Reads record ${i} of the ledger and returns it with its history.`,
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'the record id' },
        limit: { type: 'integer', minimum: 1 },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['id', 'limit'],
      ...(i % 3 === 0 && { additionalProperties: false }),
    },
  }));
}

/** A 30-line program that calls tools, shapes their results and reports. */
const PROGRAM = `const ids = ['a', 'b', 'c', 'd'];
const results = [];
for (const id of ids) {
  const result = await tools.tool_1({ id, limit: 10 });
  results.push(result);
}
const texts = results.flatMap((r) => r.content);
let total = 0;
for (const item of texts) {
  if (item.type === 'text') total += item.text.length;
}
const byKind = new Map<string, number>();
for (const item of texts) byKind.set(item.type, (byKind.get(item.type) ?? 0) + 1);
const summary = {
  total,
  kinds: Object.fromEntries(byKind),
  first: texts[0],
};
const extra = await tools.tool_2({ id: 'x', limit: 1, tags: ['a'] });
if (extra.isError) throw new Error(extra.error ?? 'failed');
const url = new URL('https://example.com/ledger');
url.searchParams.set('n', String(total));
const words = summary.first && summary.first.type === 'text' ? summary.first.text.split(' ') : [];
const longest = words.reduce((a, b) => (b.length > a.length ? b : a), '');
console.log('longest word', longest);
output(summary);
output({ url: url.href, words: words.length });
const stamp = new Date().toISOString();
return { stamp, ok: true };`;

export default async function bench(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const count of [9, 300]) results.push(...inThread(count));
  results.push(...(await inWorker()));
  results.push(...(await throughServer()));
  return results;
}

function inThread(count: number): BenchResult[] {
  const checker = new ProgramChecker(checkDeclarations(toolSources(count)));
  let started = performance.now();
  const first = checker.check(PROGRAM);
  const cold = performance.now() - started;
  if (first.errors.length > 0)
    throw new Error(`the bench program does not pass: ${JSON.stringify(first.errors)}`);
  let n = 0;
  const samples: number[] = [];
  const end = performance.now() + 3000;
  while (performance.now() < end) {
    started = performance.now();
    // Each check reads a new program text, as each run brings one.
    checker.check(`${PROGRAM}\n// ${n++}`);
    samples.push(performance.now() - started);
  }
  return [
    { name: `check cold (first program), ${count} tools`, value: cold, unit: 'ms' },
    {
      name: `check p50, 30 lines, ${count} tools`,
      value: percentile(samples, 50),
      unit: 'ms',
      target: '< 15 ms',
    },
    { name: `check p99, 30 lines, ${count} tools`, value: percentile(samples, 99), unit: 'ms' },
  ];
}

async function inWorker(): Promise<BenchResult[]> {
  const started = performance.now();
  const checker = createChecker({ declarations: checkDeclarations(toolSources(9)) });
  try {
    await checker.check(PROGRAM);
    const cold = performance.now() - started;
    let n = 0;
    const samples = await sample(() => checker.check(`${PROGRAM}\n// ${n++}`), 3000, 10);
    return [
      { name: 'checker worker: start to first report', value: cold, unit: 'ms' },
      { name: 'checker worker: check p50 (round trip)', value: percentile(samples, 50), unit: 'ms' },
      { name: 'checker worker: check p99 (round trip)', value: percentile(samples, 99), unit: 'ms' },
    ];
  } finally {
    await checker.close();
  }
}

async function throughServer(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-bench-check-'));
  try {
    const file = join(dir, 'tools.yaml');
    writeFileSync(
      file,
      "schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: 'hi' }\n",
    );
    await using server = await createServer({ port: 0, file, logLevel: 'silent', concurrency: 1 });
    const code = 'const r = await tools.greet({});\noutput(r.content.length);';
    const run = async (check: 'block' | 'off') => {
      const started = performance.now();
      await blockingRun(server, code, check);
      return performance.now() - started;
    };
    for (let i = 0; i < 20; i++) await run(i % 2 === 0 ? 'block' : 'off');
    const block: number[] = [];
    const off: number[] = [];
    for (let i = 0; i < 200; i++) {
      block.push(await run('block'));
      off.push(await run('off'));
    }
    const base = { name: 'run, check: off (p50)', value: percentile(off, 50) };
    return [{ ...base, unit: 'ms' }, compared('run, check: block (p50)', percentile(block, 50), 'ms', base)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function blockingRun(server: MciServer, code: string, check: 'block' | 'off'): Promise<void> {
  const response = await fetch(`${server.url}/processes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, check, block: true }),
  });
  const body = (await response.json()) as { status?: string; stderr?: string };
  if (body.status !== 'success') throw new Error(`bench program ${body.status}: ${body.stderr}`);
}
