// The baselines and load driver of sandbox.bench.ts: the raw isolated-vm loop (in this process and in
// n processes), a bare IPC round trip, and the machine's busy CPU time.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import ivm from 'isolated-vm';
import { percentile } from '../../../bench/lib.ts';

const PROGRAM = 'output(1 + 1)';
const run = promisify(execFile);

/**
 * Calls `fn` for about `ms` with `concurrency` callers, each waiting `gapMs` between its calls;
 * returns ops/s and every latency (ms).
 */
export async function load(fn: () => Promise<unknown>, concurrency: number, ms: number, gapMs = 0) {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        if (gapMs > 0) await sleep(gapMs);
        const t = performance.now();
        await fn();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { opsPerSec: latencies.length / ((performance.now() - started) / 1000), latencies };
}

/** Busy CPU time of the whole machine so far (ms, from /proc/stat), or NaN where there is none. */
export function machineBusyMs(): number {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq] = fields.map(Number) as number[];
    // Clock ticks; USER_HZ is 100 on Linux.
    return ((user! + nice! + system! + irq! + softirq!) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * The raw isolated-vm loop (new isolate + context + compile + run + dispose), in this process and
 * thread, for about `ms`; returns ops/s. With `withOutput`, the program is the pool's own,
 * `output(1 + 1)`, with `output` a Callback that records its argument: the least a user of
 * isolated-vm needs to run the same program. Without, the program is `1 + 1`, its result read back.
 */
export function rawIsolatedVm(ms: number, withOutput = false): number {
  let n = 0;
  const end = performance.now() + ms;
  const started = performance.now();
  while (performance.now() < end) {
    const isolate = new ivm.Isolate({ memoryLimit: 128 });
    const context = isolate.createContextSync();
    let result: unknown;
    if (withOutput) {
      const outputs: unknown[] = [];
      context.global.setSync('output', new ivm.Callback((value: unknown) => void outputs.push(value)));
      isolate.compileScriptSync(PROGRAM).runSync(context);
      result = outputs[0];
    } else {
      result = isolate.compileScriptSync('1 + 1').runSync(context);
    }
    if (result !== 2) throw new Error('raw isolated-vm returned a wrong result');
    isolate.dispose();
    n++;
  }
  return n / ((performance.now() - started) / 1000);
}

/**
 * The raw isolated-vm loop run in `n` processes at once, their ops/s summed: what this machine really
 * gives `n` such loops together ("raw x pool size" assumes `n` free cores; the pool also
 * shares them with its host process and the workers' main threads). For reference only.
 */
export async function rawIsolatedVmParallel(n: number, ms: number): Promise<number> {
  const ivmPath = createRequire(import.meta.url).resolve('isolated-vm');
  const script = `const ivm = require(${JSON.stringify(ivmPath)});
const loop = (ms) => { let n = 0; const end = performance.now() + ms; const t = performance.now();
  while (performance.now() < end) { const i = new ivm.Isolate({ memoryLimit: 128 }); const c = i.createContextSync();
    if (i.compileScriptSync('1 + 1').runSync(c) !== 2) throw new Error('wrong result'); i.dispose(); n++; }
  return n / ((performance.now() - t) / 1000); };
loop(300); console.log(loop(${ms}));`;
  const runs = await Promise.all(
    Array.from({ length: n }, () => run(process.execPath, ['--no-node-snapshot', '-e', script])),
  );
  return runs.reduce((sum, { stdout }) => sum + Number(stdout.trim()), 0);
}

/** p50 of a bare IPC round trip (advanced serialization) with a child that echoes, in microseconds. */
export async function ipcRoundTripUs(): Promise<number> {
  const child = spawn(process.execPath, ['-e', "process.on('message', (m) => process.send(m))"], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  try {
    const ping = () =>
      new Promise((resolve) => {
        child.once('message', resolve);
        child.send({
          type: 'settle',
          callId: 1,
          ok: true,
          value: { isError: false, content: [{ type: 'text', text: 'Hello' }] },
        });
      });
    await ping();
    const { latencies } = await load(ping, 1, 1500);
    return percentile(latencies, 50) * 1000;
  } finally {
    child.kill();
  }
}

