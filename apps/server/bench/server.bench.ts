// MCI Server end to end over WebSocket, against the sandbox pool it runs on, in one run: latency of
// `output(1 + 1)` from `process.create` to the final `process` event with 1 and with 16 clients,
// throughput, and the kill latency of a running tight loop. Targets: the server adds under
// 1 ms p50 over the sandbox alone; throughput at least 80% of the pool's; kill under 100 ms p99.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createSandboxPool } from '@mci/sandbox';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createServer } from '../src/server.ts';
import { BenchClient, LOAD_TEST_SERVER, loadTest } from './ws-bench-client.ts';

const program = 'output(1 + 1)';
const toolFile = fileURLToPath(new URL('../../../examples/transcripts/tools.mci.yaml', import.meta.url));

export default async function bench(): Promise<BenchResult[]> {
  const size = Math.max(2, availableParallelism());
  await using pool = createSandboxPool({ size });
  await using server = await createServer({ ...LOAD_TEST_SERVER, pool, file: toolFile });
  const clients = await Promise.all(Array.from({ length: 16 }, () => BenchClient.open(server.wsUrl)));
  const direct = async () => {
    const result = await pool.execute({ code: program, lang: 'ts' }).result;
    if (result.status !== 'success') throw new Error(`pool run failed: ${result.status}`);
  };
  const viaServer = (client = 0) => clients[client]!.create(program);
  // The process manager in the same process, without the transport: splits the overhead in two.
  const operator = { id: 'local', role: 'operator' } as const;
  const viaManager = async () =>
    server.manager.wait((await server.manager.create({ code: program }, operator)).pid, operator);

  // Warm every worker on both paths.
  await loadTest(size, 1500, () => direct());
  await loadTest(size, 1500, (c) => viaServer(c));

  // 1 caller: alternate the two paths call by call so both see the same machine state.
  const one = { pool: [] as number[], ws: [] as number[] };
  const stopAt = performance.now() + 6000;
  while (performance.now() < stopAt) {
    let t = performance.now();
    await direct();
    one.pool.push(performance.now() - t);
    t = performance.now();
    await viaServer();
    one.ws.push(performance.now() - t);
  }

  // 16 concurrent callers; rounds alternate between the two paths so both see the same machine load.
  const pool16 = { samples: [] as number[], seconds: 0 };
  const ws16 = { samples: [] as number[], seconds: 0 };
  const manager16 = { samples: [] as number[], seconds: 0 };
  for (let round = 0; round < 4; round++) {
    for (const [into, job] of [
      [pool16, () => direct()],
      [manager16, () => viaManager()],
      [ws16, (c: number) => viaServer(c)],
    ] as const) {
      const run = await loadTest(16, 1500, job);
      into.samples.push(...run.samples);
      into.seconds += run.seconds;
    }
  }
  const perSecond = (run: { samples: number[]; seconds: number }) => run.samples.length / run.seconds;

  // Kill latency: a running tight loop, from the kill request to the final (canceled) process event.
  const kills: number[] = [];
  for (let i = 0; i < 30; i++) {
    const client = clients[0]!;
    const pid = await client.create('while (true) {}', 'running', { timeoutMs: 60_000 });
    const t = performance.now();
    await client.kill(pid);
    kills.push(performance.now() - t);
  }
  for (const client of clients) client.close();

  const p = (samples: number[], q: number) => percentile(samples, q);
  const base = (name: string, value: number) => ({ name, value });
  return [
    compared(
      'ws e2e latency p50, 1 client',
      p(one.ws, 50),
      'ms',
      base('sandbox pool p50, 1 caller', p(one.pool, 50)),
      'pool + < 1 ms',
    ),
    compared(
      'ws e2e latency p99, 1 client',
      p(one.ws, 99),
      'ms',
      base('sandbox pool p99, 1 caller', p(one.pool, 99)),
    ),
    {
      name: 'server overhead p50, 1 client',
      value: p(one.ws, 50) - p(one.pool, 50),
      unit: 'ms',
      target: '< 1 ms',
    },
    compared(
      'ws e2e latency p50, 16 clients',
      p(ws16.samples, 50),
      'ms',
      base('sandbox pool p50, 16 callers', p(pool16.samples, 50)),
    ),
    compared(
      'ws e2e latency p99, 16 clients',
      p(ws16.samples, 99),
      'ms',
      base('sandbox pool p99, 16 callers', p(pool16.samples, 99)),
    ),
    compared(
      'ws throughput, 16 clients',
      perSecond(ws16),
      'processes/s',
      base('sandbox pool, 16 callers', perSecond(pool16)),
      '>= 80% of pool',
    ),
    compared(
      'process manager throughput, 16 callers (no transport)',
      perSecond(manager16),
      'processes/s',
      base('sandbox pool, 16 callers', perSecond(pool16)),
    ),
    { name: 'kill latency p50 (running tight loop)', value: p(kills, 50), unit: 'ms' },
    { name: 'kill latency p99 (running tight loop)', value: p(kills, 99), unit: 'ms', target: '< 100 ms' },
  ];
}
