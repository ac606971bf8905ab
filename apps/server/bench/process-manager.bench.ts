// The process manager's cost over the sandbox pool it schedules on, measured in one run:
// latency and throughput of `output(1 + 1)` through the pool directly and through the manager
// (create -> idle), the manager's own overhead with an executor that answers at once, and the kill
// latency of a running tight loop. The WebSocket end-to-end numbers are in test/e2e's bench.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxPool } from '@mci/sandbox';
import { createToolRunner, loadTools } from '@mci/tools';
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import type { Principal } from '../src/processes/process-manager-types.ts';
import { instantPool } from './instant-pool.ts';

const principal: Principal = { id: 'bench', role: 'operator' };
const program = 'output(1 + 1)';

/** Runs `total` jobs with at most `concurrency` in flight; returns jobs per second. */
async function throughput(total: number, concurrency: number, job: () => Promise<unknown>): Promise<number> {
  let started = 0;
  const begin = performance.now();
  const worker = async () => {
    while (started < total) {
      started++;
      await job();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return total / ((performance.now() - begin) / 1000);
}

/** Latency samples (ms) of `a` and `b`, alternating call by call. */
async function interleaved(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  count: number,
  warmup: number,
) {
  const samples = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < warmup + count; i++) {
    for (const [key, fn] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const begin = performance.now();
      await fn();
      if (i >= warmup) samples[key].push(performance.now() - begin);
    }
  }
  return samples;
}

export default async function bench(): Promise<BenchResult[]> {
  const size = 2;
  const pool = createSandboxPool({ size });
  const results: BenchResult[] = [];
  try {
    const direct = () => pool.execute({ code: program }).result;
    const manager = await createProcessManager({ pool });
    const viaManager = async () =>
      manager.wait((await manager.create({ code: program }, principal)).pid, principal);

    // Interleaved, so both see the same machine load (the CI box is shared).
    const { a: directLatency, b: managerLatency } = await interleaved(direct, viaManager, 800, 50);
    const directP50 = percentile(directLatency, 50);
    const managerP50 = percentile(managerLatency, 50);
    results.push(
      { name: 'sandbox pool execute output(1+1) p50', value: directP50, unit: 'ms' },
      { name: 'sandbox pool execute output(1+1) p99', value: percentile(directLatency, 99), unit: 'ms' },
      compared('process manager create->idle p50', managerP50, 'ms', {
        name: 'sandbox pool p50',
        value: directP50,
      }),
      compared('process manager create->idle p99', percentile(managerLatency, 99), 'ms', {
        name: 'sandbox pool p99',
        value: percentile(directLatency, 99),
      }),
      { name: 'process manager overhead p50', value: managerP50 - directP50, unit: 'ms', target: '< 1 ms' },
    );

    const inFlight = size * 4;
    const directRates: number[] = [];
    const managerRates: number[] = [];
    for (let round = 0; round < 3; round++) {
      directRates.push(await throughput(600, inFlight, direct));
      managerRates.push(await throughput(600, inFlight, viaManager));
    }
    const directRate = percentile(directRates, 50);
    results.push(
      { name: 'sandbox pool throughput (median of 3)', value: directRate, unit: 'ops/s' },
      compared(
        'process manager throughput (median of 3)',
        percentile(managerRates, 50),
        'ops/s',
        { name: 'sandbox pool', value: directRate },
        '>= 0.8x',
      ),
    );

    // The manager alone: an executor that answers at once, against calling that executor directly.
    const instant = instantPool(size);
    const bare = await createProcessManager({ pool: instant });
    const bareLatency = await sample(
      async () => bare.wait((await bare.create({ code: program }, principal)).pid, principal),
      1000,
    );
    const instantLatency = await sample(() => instant.execute({ code: program }).result, 1000);
    results.push(
      compared(
        'process manager scheduling cost per process p50',
        percentile(bareLatency, 50) * 1000,
        'us',
        { name: 'instant executor called directly', value: percentile(instantLatency, 50) * 1000 },
        '< 1000 us',
      ),
    );

    // Kill latency: a running program (its first output arrived) -> idle/canceled, for a tight loop
    // and for a program awaiting a slow cli tool (whose command is killed too).
    const dir = mkdtempSync(join(tmpdir(), 'mci-bench-'));
    writeFileSync(
      join(dir, 'mci.yaml'),
      "schemaVersion: '1.0'\ntools:\n  - name: slow\n    execution: { type: cli, command: sleep, args: ['30'] }\n",
    );
    const tools = createToolRunner(await loadTools(join(dir, 'mci.yaml')));
    try {
      const killer = await createProcessManager({ pool, tools });
      for (const [label, code] of [
        ['tight loop', 'output(0);\nwhile (true) {}'],
        ['awaiting a slow cli tool', 'output(0);\nawait tools.slow({});'],
      ] as const) {
        const killLatency: number[] = [];
        for (let i = 0; i < 40; i++) {
          const { pid } = await killer.create({ code }, principal);
          await new Promise<void>((resolve) => {
            const off = killer.onEvent((event) => {
              if (event.type === 'output' && event.pid === pid) {
                off();
                resolve();
              }
            });
          });
          const begin = performance.now();
          await killer.signal(pid, 'kill', principal);
          await killer.wait(pid, principal);
          killLatency.push(performance.now() - begin);
        }
        results.push(
          { name: `kill running (${label}) -> idle p50`, value: percentile(killLatency, 50), unit: 'ms' },
          {
            name: `kill running (${label}) -> idle p99`,
            value: percentile(killLatency, 99),
            unit: 'ms',
            target: '< 100 ms',
          },
        );
      }
    } finally {
      await tools.close();
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await pool.close();
  }
  return results;
}
