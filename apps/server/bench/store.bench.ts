// The durable store's cost on the hot path, measured in one run: throughput of `output(1 + 1)`
// processes through the process manager and the real sandbox pool with the in-memory store and with
// the SQLite store (a WAL file on disk), in interleaved rounds so both see the same machine load; and
// the same with an executor that answers at once, where the store's cost per process is all that is
// left to see.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxPool } from '@mci/sandbox';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createProcessManager } from '../src/processes/process-manager.ts';
import type { ExecutionPool, Principal, ProcessManager } from '../src/processes/process-manager-types.ts';
import { createMemoryStore } from '../src/store/memory-store.ts';
import { openSqliteStore } from '../src/store/sql/open-sqlite.ts';
import { instantPool } from './instant-pool.ts';

const principal: Principal = { id: 'bench', role: 'operator' };
const program = 'output(1 + 1)';

/** Runs `total` processes with at most `inFlight` at once (create -> idle); returns processes per second. */
async function throughput(manager: ProcessManager, total: number, inFlight: number): Promise<number> {
  let started = 0;
  const begin = performance.now();
  const worker = async () => {
    while (started < total) {
      started++;
      await manager.wait((await manager.create({ code: program }, principal)).pid, principal);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return total / ((performance.now() - begin) / 1000);
}

/**
 * Median throughput (processes per second) through `pool` with a fresh memory store and a fresh SQLite
 * store at `path`, over 5 interleaved rounds of `total` processes, `inFlight` at once.
 */
async function race(pool: ExecutionPool, path: string, total: number, inFlight: number) {
  const rounds = 5;
  const managers = {
    memory: await createProcessManager({ pool, store: createMemoryStore() }),
    sqlite: await createProcessManager({ pool, store: await openSqliteStore({ path }) }),
  };
  const rates = { memory: [] as number[], sqlite: [] as number[] };
  await throughput(managers.memory, 100, inFlight); // warm-up
  await throughput(managers.sqlite, 100, inFlight);
  for (let round = 0; round < rounds; round++) {
    for (const key of round % 2 === 0 ? (['memory', 'sqlite'] as const) : (['sqlite', 'memory'] as const)) {
      rates[key].push(await throughput(managers[key], total, inFlight));
    }
  }
  await managers.memory.shutdown({ graceMs: 0 });
  await managers.sqlite.shutdown({ graceMs: 0 });
  return { memory: percentile(rates.memory, 50), sqlite: percentile(rates.sqlite, 50) };
}

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-store-bench-'));
  const size = 2;
  const pool = createSandboxPool({ size });
  const results: BenchResult[] = [];
  try {
    const real = await race(pool, join(dir, 'real.db'), 600, size * 4);
    results.push(
      { name: 'manager + sandbox throughput, memory store (median of 5)', value: real.memory, unit: 'ops/s' },
      compared(
        'manager + sandbox throughput, SQLite store (median of 5)',
        real.sqlite,
        'ops/s',
        { name: 'memory store', value: real.memory },
        '>= 0.9x',
      ),
    );

    // An executor that answers at once: what is left is the manager and its store.
    const bare = await race(instantPool(size, { deferred: true }), join(dir, 'bare.db'), 5000, size * 4);
    results.push(
      { name: 'manager alone throughput, memory store (median of 5)', value: bare.memory, unit: 'ops/s' },
      compared('manager alone throughput, SQLite store (median of 5)', bare.sqlite, 'ops/s', {
        name: 'memory store',
        value: bare.memory,
      }),
      {
        name: 'SQLite store cost per process (create -> idle, 1 output)',
        value: (1 / bare.sqlite - 1 / bare.memory) * 1e6,
        unit: 'us',
      },
    );
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
