// `isolation: context` (an isolate per principal, a fresh context per run) against `isolation:
// isolate` (a fresh isolate per run) and the raw isolated-vm loop, in one run: `output(1 + 1)` over
// WebSocket from `process.create` to the final `process` event.
// - 1 client back to back, p50: target at most 0.8x one raw fresh isolate + context + eval.
// - 16 clients, runs per second: target at least 1.2x twice the raw rate (2 cores).
// - 1 client back to back against 1 client with 5 ms between runs, p50: target within 1.1x.
// Both servers run on pools of 2 workers, measured in alternating rounds.
import { fileURLToPath } from 'node:url';
import { createSandboxPool, type Isolation, type SandboxPool } from '@mci/sandbox';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { rawIsolatedVm } from '../../../packages/sandbox/bench/baselines.ts';
import { createServer, type MciServer } from '../src/server.ts';
import { BenchClient, LOAD_TEST_SERVER, loadTest } from './ws-bench-client.ts';

const PROGRAM = 'output(1 + 1)';
const ROUNDS = 4;
const toolFile = fileURLToPath(new URL('../../../examples/transcripts/tools.mci.yaml', import.meta.url));

interface Measured {
  serial: number[];
  spaced: number[];
  runs: number;
  seconds: number;
}

export default async function bench(): Promise<BenchResult[]> {
  const modes: Isolation[] = ['context', 'isolate'];
  const servers = new Map<Isolation, { server: MciServer; clients: BenchClient[]; pool: SandboxPool }>();
  const measured = new Map<Isolation, Measured>();
  const raw: number[] = [];
  try {
    for (const isolation of modes) {
      const pool = createSandboxPool({ size: 2, isolation });
      const server = await createServer({ ...LOAD_TEST_SERVER, pool, file: toolFile });
      const clients = await Promise.all(Array.from({ length: 16 }, () => BenchClient.open(server.wsUrl)));
      servers.set(isolation, { server, clients, pool });
      measured.set(isolation, { serial: [], spaced: [], runs: 0, seconds: 0 });
      await loadTest(16, 1500, (c) => clients[c]!.create(PROGRAM));
    }
    for (let round = 0; round < ROUNDS; round++) {
      raw.push(1000 / rawIsolatedVm(1000, true));
      for (const isolation of modes) {
        const { clients } = servers.get(isolation)!;
        const into = measured.get(isolation)!;
        const serial = await loadTest(1, 1500, () => clients[0]!.create(PROGRAM));
        into.serial.push(...serial.samples);
        const spacedEnd = performance.now() + 1500;
        while (performance.now() < spacedEnd) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          const t = performance.now();
          await clients[0]!.create(PROGRAM);
          into.spaced.push(performance.now() - t);
        }
        const many = await loadTest(16, 1500, (c) => clients[c]!.create(PROGRAM));
        into.runs += many.samples.length;
        into.seconds += many.seconds;
      }
    }
  } finally {
    for (const { server, clients, pool } of servers.values()) {
      for (const client of clients) client.close();
      await server.close();
      await pool.close();
    }
  }
  const rawMs = percentile(raw, 50);
  const rows: BenchResult[] = [
    { name: 'raw fresh isolate + context + eval (1 core)', value: rawMs, unit: 'ms' },
  ];
  for (const isolation of modes) {
    const m = measured.get(isolation)!;
    const serial = percentile(m.serial, 50);
    rows.push(
      compared(
        `${isolation}: ws e2e p50, 1 client back to back`,
        serial,
        'ms',
        {
          name: 'raw fresh isolate',
          value: rawMs,
        },
        isolation === 'context' ? '<= 0.8x' : undefined,
      ),
      compared(
        `${isolation}: ws runs/s, 16 clients`,
        m.runs / m.seconds,
        'ops/s',
        {
          name: '2 x raw rate',
          value: (2 * 1000) / rawMs,
        },
        isolation === 'context' ? '>= 1.2x' : undefined,
      ),
      compared(
        `${isolation}: ws e2e p50 back to back vs 5 ms apart`,
        serial,
        'ms',
        {
          name: 'spaced 5 ms',
          value: percentile(m.spaced, 50),
        },
        isolation === 'context' ? '<= 1.1x' : undefined,
      ),
    );
  }
  return rows;
}
