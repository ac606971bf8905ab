// `state.get` and `state.set` round trips from the sandbox (program -> host -> SQLite store -> program)
// against a tool call's round trip (a text tool, no process spawned), on an SQLite file, measured by
// the program itself over many calls in one run.
// Target: each under 2x a tool call's round trip.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@mci/client';
import { type BenchResult, compared } from '../../../bench/lib.ts';
import { createServer } from '../src/server.ts';

const CALLS = 900;
const RUNS = 5;

/** A program timing `CALLS` awaited calls of `call` (its mean in ms). */
const timing = (setup: string, call: string) => `
  ${setup}
  for (let i = 0; i < 40; i++) await ${call};
  const t = Date.now();
  for (let i = 0; i < ${CALLS}; i++) await ${call};
  return (Date.now() - t) / ${CALLS};`;

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-state-bench-'));
  try {
    const file = join(dir, 'tools.yaml');
    writeFileSync(
      file,
      "schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: 'Hello!' }\n",
    );
    await using server = await createServer({
      port: 0,
      file,
      logLevel: 'silent',
      db: join(dir, 'mci.db'),
      check: 'off',
      limits: { maxTimeoutMs: 300_000 },
    });
    await using client = await connect(server.url);
    const best = async (code: string) => {
      let min = Number.POSITIVE_INFINITY;
      for (let i = 0; i < RUNS; i++) {
        const created = await client.createProcess(code, { session: 'bench', timeoutMs: 300_000 });
        await client.wait(created.pid);
        const result = await client.getResult(created.pid);
        if (result.status !== 'success') throw new Error(`bench program failed: ${result.stderr}`);
        min = Math.min(min, result.outputs[0] as number);
      }
      return min;
    };
    const tool = await best(timing('', 'tools.greet({})'));
    const get = await best(
      timing(`await state.set('k', { rows: [1, 2, 3], at: new Date() });`, `state.get('k')`),
    );
    const set = await best(timing('', `state.set('k', { rows: [1, 2, 3], i })`));
    const baseline = { name: 'tool call round trip (text tool)', value: tool };
    return [
      { name: 'tool call round trip (text tool)', value: tool, unit: 'ms' },
      compared('state.get round trip (SQLite)', get, 'ms', baseline, '< 2x a tool call'),
      compared(
        'state.set round trip (SQLite, one transaction each)',
        set,
        'ms',
        baseline,
        '< 2x a tool call',
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
