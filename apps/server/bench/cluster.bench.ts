// The process store's cost on the server's hot path: processes/s and p50 latency of `output(1 + 1)`
// through the process manager (create, run, wait) with one node on SQLite, one node on PostgreSQL,
// one cluster node on PostgreSQL and two cluster nodes sharing one PostgreSQL database, in the same
// run; rounds alternate so every configuration sees the same machine load. Then the latency from
// `create` on cluster node 1 until the process's `output` event reaches a listener on node 2,
// against the same on node 1, and the time a kill sent to node 2 takes to stop a process running on
// node 1 (against a kill sent to node 1). Every server runs in this one Node process.
// Target: one node on Postgres within 80% of SQLite throughput.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSandboxPool } from '@mci/sandbox';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { createServer, type MciServer } from '../src/server.ts';
import { adminQuery, freshDatabase } from '../test/support/postgres.ts';
import { loadTest } from './ws-bench-client.ts';

const program = 'output(1 + 1)';
const toolFile = fileURLToPath(new URL('../../../examples/transcripts/tools.mci.yaml', import.meta.url));
const operator = { id: 'bench', role: 'operator' } as const;
const rounds = 4;
const eventSamplesPerRound = 100;

/** One server configuration under load, with the samples of all its rounds. */
class Path {
  readonly one: number[] = [];
  readonly many: number[] = [];
  #seconds = 0;
  #next = 0;

  readonly name: string;
  readonly servers: MciServer[];

  constructor(name: string, servers: MciServer[]) {
    this.name = name;
    this.servers = servers;
  }

  /** Creates `output(1 + 1)` and waits for its end, on the path's servers in turn. */
  readonly job = async () => {
    const { manager } = this.servers[this.#next++ % this.servers.length]!;
    return manager.wait((await manager.create({ code: program }, operator)).pid, operator);
  };

  async round(): Promise<void> {
    this.one.push(...(await loadTest(1, 1000, this.job)).samples);
    const run = await loadTest(16, 1500, this.job);
    this.many.push(...run.samples);
    this.#seconds += run.seconds;
  }

  get rate(): number {
    return this.many.length / this.#seconds;
  }
}

/**
 * Creates `output(1 + 1)` on `from` and returns the ms from `create` until the `output` event
 * reached a listener on each of `listeners`, once the process is over.
 */
async function outputArrival(from: MciServer, listeners: MciServer[]): Promise<number[]> {
  const arrivals = listeners.map(outputTimes);
  const start = performance.now();
  // The output may reach a listener before the create is acknowledged (and its pid known).
  const { pid } = await from.manager.create({ code: program }, operator);
  const times = await Promise.all(arrivals.map((arrival) => arrival.of(pid)));
  for (const arrival of arrivals) arrival.stop();
  await from.manager.wait(pid, operator);
  return times.map((t) => t - start);
}

/** When the first `output` event of each process reached `server`'s listeners (`performance.now()`). */
function outputTimes(server: MciServer) {
  const times = new Map<number, number>();
  const waiters = new Map<number, (at: number) => void>();
  const stop = server.manager.onEvent((event) => {
    if (event.type !== 'output' || times.has(event.pid)) return;
    const at = performance.now();
    times.set(event.pid, at);
    waiters.get(event.pid)?.(at);
  });
  return {
    of: (pid: number) =>
      new Promise<number>((resolve) => {
        const at = times.get(pid);
        if (at === undefined) waiters.set(pid, resolve);
        else resolve(at);
      }),
    stop,
  };
}

/**
 * Starts a tight loop on `runner`, sends `kill` through `sender` once it runs, and returns the ms
 * from the signal until the process is idle on `runner`.
 */
async function killTime(runner: MciServer, sender: MciServer): Promise<number> {
  const { pid } = await runner.manager.create({ code: 'while (true) {}', timeoutMs: 60_000 }, operator);
  // The sender sees the process once the runner's write batch with its start is committed.
  const seen = async () => {
    try {
      return (await sender.manager.get(pid, operator)).state === 'running';
    } catch {
      return false;
    }
  };
  while ((await runner.manager.get(pid, operator)).state !== 'running' || !(await seen()))
    await new Promise((resolve) => setTimeout(resolve, 1));
  const start = performance.now();
  await sender.manager.signal(pid, 'kill', operator);
  await runner.manager.wait(pid, operator);
  return performance.now() - start;
}

/** `path` against `baseline` on processes/s (16 callers) and p50 (1 and 16 callers). */
function comparedRows(path: Path, baseline: Path, rateTarget?: string): BenchResult[] {
  const against = (value: number) => ({ name: baseline.name, value });
  const p50 = (samples: number[]) => percentile(samples, 50);
  return [
    compared(`processes/s, 16 callers, ${path.name}`, path.rate, 'ops/s', against(baseline.rate), rateTarget),
    compared(`output(1 + 1) p50, 1 caller, ${path.name}`, p50(path.one), 'ms', against(p50(baseline.one))),
    compared(
      `output(1 + 1) p50, 16 callers, ${path.name}`,
      p50(path.many),
      'ms',
      against(p50(baseline.many)),
    ),
  ];
}

export default async function bench(): Promise<BenchResult[]> {
  await adminQuery('SELECT 1'); // fails fast when no PostgreSQL answers
  const dir = mkdtempSync(join(tmpdir(), 'mci-cluster-bench-'));
  await using plainDb = await freshDatabase();
  await using soloDb = await freshDatabase();
  await using pairDb = await freshDatabase();
  // Every server, both cluster nodes included, runs on this one pool, so two nodes get the same
  // sandbox workers as one and the comparison shows what the cluster costs, not extra CPU.
  await using pool = createSandboxPool({ size: Math.max(2, availableParallelism()) });
  const options = {
    port: 0,
    pool,
    file: toolFile,
    logLevel: 'silent' as const,
    maxQueue: 100_000,
    retention: false,
  } as const;
  const cluster = (db: { url: string }, node: string) =>
    createServer({ ...options, db: db.url, cluster: true, node });
  await using sqlite = await createServer({ ...options, db: join(dir, 'mci.db') });
  await using postgres = await createServer({ ...options, db: plainDb.url });
  await using solo = await cluster(soloDb, 'solo');
  await using node1 = await cluster(pairDb, 'n1');
  await using node2 = await cluster(pairDb, 'n2');
  const paths = {
    sqlite: new Path('1 node on SQLite', [sqlite]),
    postgres: new Path('1 node on Postgres', [postgres]),
    solo: new Path('1 cluster node on Postgres', [solo]),
    pair: new Path('2 cluster nodes on Postgres', [node1, node2]),
  };

  for (const path of Object.values(paths)) await loadTest(16, 1500, path.job);
  for (let i = 0; i < 20; i++) await outputArrival(node1, [node1, node2]);
  const local: number[] = [];
  const remote: number[] = [];
  const kills = { local: [] as number[], remote: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (const path of Object.values(paths)) await path.round();
    // Listeners on both nodes watch each process, so local and cross-node delivery share samples.
    for (let i = 0; i < eventSamplesPerRound; i++) {
      const [onNode1, onNode2] = await outputArrival(node1, [node1, node2]);
      local.push(onNode1!);
      remote.push(onNode2!);
    }
    for (let i = 0; i < 5; i++) {
      kills.local.push(await killTime(node1, node1));
      kills.remote.push(await killTime(node1, node2));
    }
  }
  rmSync(dir, { recursive: true, force: true });

  const toNode2 = (p: number) =>
    compared(`output event p${p}, create on node 1 -> listener on node 2`, percentile(remote, p), 'ms', {
      name: 'listener on node 1',
      value: percentile(local, p),
    });
  return [
    ...comparedRows(paths.postgres, paths.sqlite, '>= 0.8 x SQLite'),
    ...comparedRows(paths.solo, paths.sqlite, '>= 0.6 x SQLite'),
    ...comparedRows(paths.pair, paths.solo),
    toNode2(50),
    toNode2(99),
    compared(
      'kill p50, sent to node 2 for a process running on node 1, until idle',
      percentile(kills.remote, 50),
      'ms',
      { name: 'kill sent to node 1', value: percentile(kills.local, 50) },
      '< 100 ms',
    ),
    compared('kill max, sent to node 2, until idle', Math.max(...kills.remote), 'ms', {
      name: 'kill sent to node 1',
      value: Math.max(...kills.local),
    }),
  ];
}
