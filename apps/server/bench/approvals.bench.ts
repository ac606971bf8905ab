// Policies and approvals, in one run:
// 1. The cost of the policy check and call log on an allowed tool call: a program making 200 calls
//    of a text tool through the gated tools (as every run sees them) against the same program with
//    the bare tool runner, on one sandbox pool, interleaved. Target: under 5% of the tool round trip.
// 2. From approve to the resumed run's first new call: `POST /approvals/:id/approve` sent, until the
//    approved http tool's request reaches a local service (the run is queued, replays its log, acts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxPool, type ToolHost } from '@mci/sandbox';
import { createToolRunner, loadTools } from '@mci/tools';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { ApprovalStore } from '../src/approvals/approval-store.ts';
import { Approvals } from '../src/approvals/approvals.ts';
import { GatedTools } from '../src/approvals/gated-tools.ts';
import { createServer } from '../src/server.ts';
import { openDatabase } from '../src/store/sql/sqlite-file.ts';

const CALLS = 200;
const ROUNDS = 15;

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-bench-approvals-'));
  try {
    return [...(await policyCheck(dir)), ...(await approveToCall(dir))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function policyCheck(dir: string): Promise<BenchResult[]> {
  const file = join(dir, 'tools.yaml');
  writeFileSync(
    file,
    "schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: 'hi' }\n",
  );
  const collection = await loadTools(file);
  await using runner = createToolRunner(collection);
  const database = await openDatabase(':memory:');
  const approvals = await Approvals.open({
    store: new ApprovalStore(database.kysely),
    tools: collection.list(),
    rules: [{ tool: 'greet', decision: 'allow' }],
  });
  const gated = (): ToolHost =>
    new GatedTools(
      runner,
      {
        decide: (tool) => approvals.decisionFor(tool),
        describe: (name) => approvals.describe(name),
        decideFetch: (url, method) => approvals.decisionForFetch(url, method),
        ask: () => {},
        diverged: () => {},
      },
      undefined,
    );
  const pool = createSandboxPool({ size: 1 });
  const code = `for (let i = 0; i < ${CALLS}; i++) await tools.greet({ i });`;
  const perCall = async (tools: ToolHost) => {
    const started = performance.now();
    const result = await pool.execute({ code, tools, timeoutMs: 60_000 }).result;
    if (result.status !== 'success') throw new Error(`bench program ${result.status}: ${result.stderr}`);
    return (performance.now() - started) / CALLS;
  };
  const bare: number[] = [];
  const checked: number[] = [];
  try {
    await perCall(runner);
    await perCall(gated());
    for (let i = 0; i < ROUNDS; i++) {
      bare.push(await perCall(runner));
      checked.push(await perCall(gated()));
    }
  } finally {
    await pool.close();
    database.close();
  }
  const bareMs = percentile(bare, 50);
  const checkedMs = percentile(checked, 50);
  const overhead = (checkedMs - bareMs) * 1000;
  return [
    compared('tool call round trip with the policy check and call log (p50)', checkedMs * 1000, 'us', {
      name: 'without',
      value: bareMs * 1000,
    }),
    compared(
      'policy check and call log per allowed tool call',
      overhead,
      'us',
      { name: 'tool round trip', value: bareMs * 1000 },
      '< 5% of the round trip',
    ),
  ];
}

async function approveToCall(dir: string): Promise<BenchResult[]> {
  const arrivals: number[] = [];
  const service = createHttpServer((_req, res) => {
    arrivals.push(performance.now());
    res.end('ok');
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const { port } = service.address() as { port: number };
  const file = join(dir, 'charge.yaml');
  writeFileSync(
    file,
    `schemaVersion: '1.0'
tools:
  - name: lookup
    execution: { type: text, text: 'found' }
  - name: charge
    annotations: { destructiveHint: true }
    execution: { type: http, method: POST, url: 'http://127.0.0.1:${port}/charge' }
`,
  );
  await using server = await createServer({ port: 0, file, logLevel: 'silent', db: join(dir, 'bench.db') });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      ...(body !== undefined && {
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      }),
    });
    return (await response.json()) as Record<string, any>;
  };
  const code = 'for (let i = 0; i < 5; i++) await tools.lookup({ i }); await tools.charge({});';
  const samples: number[] = [];
  try {
    for (let i = 0; i < 25; i++) {
      const { pid } = await call('POST', '/processes', { code });
      let snapshot = await call('GET', `/processes/${pid}`);
      while (snapshot.state !== 'suspended') {
        await new Promise((resolve) => setTimeout(resolve, 5));
        snapshot = await call('GET', `/processes/${pid}`);
      }
      const before = arrivals.length;
      const sent = performance.now();
      await call('POST', `/approvals/${snapshot.pendingApprovals[0]}/approve`);
      while (arrivals.length === before) await new Promise((resolve) => setTimeout(resolve, 1));
      samples.push(arrivals[before]! - sent);
    }
  } finally {
    service.close();
  }
  return [
    {
      name: 'approve -> the approved call acts (p50, 5 calls replayed)',
      value: percentile(samples.slice(5), 50),
      unit: 'ms',
    },
    { name: 'approve -> the approved call acts (p95)', value: percentile(samples.slice(5), 95), unit: 'ms' },
  ];
}
