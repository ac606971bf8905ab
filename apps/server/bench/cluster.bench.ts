// The process store's cost on the server's hot path: processes/s and p50 latency of `output(1 + 1)`
// through the process manager (create, run, wait) with one node on SQLite and one node on PostgreSQL,
// in the same run, on one sandbox pool; rounds alternate so both see the same machine load.
// Target: one node on Postgres within 80% of SQLite throughput.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSandboxPool } from '@mci/sandbox';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createServer } from '../src/server.ts';
import { adminQuery, freshDatabase } from '../test/support/postgres.ts';

const program = 'output(1 + 1)';
const toolFile = fileURLToPath(new URL('../../../examples/transcripts/tools.mci.yaml', import.meta.url));
const operator = { id: 'bench', role: 'operator' } as const;

async function loadTest(clients: number, durationMs: number, job: () => Promise<unknown>) {
  const samples: number[] = [];
  const begin = performance.now();
  const end = begin + durationMs;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await job();
        samples.push(performance.now() - t);
      }
    }),
  );
  return { samples, seconds: (performance.now() - begin) / 1000 };
}

export default async function bench(): Promise<BenchResult[]> {
  await adminQuery('SELECT 1'); // fails fast when no PostgreSQL answers
  const dir = mkdtempSync(join(tmpdir(), 'mci-cluster-bench-'));
  await using db = await freshDatabase();
  await using pool = createSandboxPool({ size: Math.max(2, availableParallelism()) });
  const options = { port: 0, pool, file: toolFile, logLevel: 'silent' as const, maxQueue: 100_000 };
  await using sqlite = await createServer({ ...options, db: join(dir, 'mci.db'), retention: false });
  await using postgres = await createServer({ ...options, db: db.url, retention: false });
  const runOn = (server: typeof sqlite) => () =>
    server.manager.wait(server.manager.create({ code: program }, operator).pid, operator);
  const paths = { sqlite: runOn(sqlite), postgres: runOn(postgres) };

  for (const job of Object.values(paths)) await loadTest(16, 1500, job);
  const one = { sqlite: [] as number[], postgres: [] as number[] };
  const many = {
    sqlite: { samples: [] as number[], seconds: 0 },
    postgres: { samples: [] as number[], seconds: 0 },
  };
  for (let round = 0; round < 4; round++) {
    for (const name of ['sqlite', 'postgres'] as const) {
      one[name].push(...(await loadTest(1, 1000, paths[name])).samples);
      const run = await loadTest(16, 1500, paths[name]);
      many[name].samples.push(...run.samples);
      many[name].seconds += run.seconds;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const rate = (name: 'sqlite' | 'postgres') => many[name].samples.length / many[name].seconds;
  return [
    compared(
      'processes/s, 16 callers, 1 node on Postgres',
      rate('postgres'),
      'ops/s',
      {
        name: '1 node on SQLite',
        value: rate('sqlite'),
      },
      '>= 0.8 x SQLite',
    ),
    compared('output(1 + 1) p50, 1 caller, 1 node on Postgres', percentile(one.postgres, 50), 'ms', {
      name: '1 node on SQLite',
      value: percentile(one.sqlite, 50),
    }),
    compared(
      'output(1 + 1) p50, 16 callers, 1 node on Postgres',
      percentile(many.postgres.samples, 50),
      'ms',
      {
        name: '1 node on SQLite',
        value: percentile(many.sqlite.samples, 50),
      },
    ),
  ];
}
