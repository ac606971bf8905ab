// The cost of traces: blocking runs per second (`POST /processes` with `block`) of a program that
// calls one http tool (a local service), from 8 concurrent HTTP clients, with tracing off and on
// (the SDK started, OTLP `http/protobuf` to a collector in another process that takes and drops
// every export). Each phase runs in a process of its own (tracing-phase.ts: the SDK is global to a
// process), off and on alternating over ROUNDS rounds so both see the same machine; the median of
// the rounds' on/off ratios is the cost, in runs per second and in the server process's CPU time per
// run (which the machine's load disturbs less).
// Every build has the tracing calls, so off is also measured directly: the calls one run makes with
// tracing off, per run, against the server's CPU time per run. Targets: off under 2%, on under 15%.
// Numbers: docs/notes/2026-11-28-tracing.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchResult, compared, percentile } from '../../../bench/lib.ts';
import { traceLogFields } from '../src/tracing/log-fields.ts';
import { inRunContext, type TracedRun, traceRunTransition } from '../src/tracing/run-spans.ts';
import { isTracing } from '../src/tracing/start-tracing.ts';
import { traceExecution } from '../src/tracing/traced-execution.ts';

const ROUNDS = 5;
const PHASE_MS = 5000;
const phase = fileURLToPath(new URL('./tracing-phase.ts', import.meta.url));

export default async function bench(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mci-bench-tracing-'));
  const service = createHttpServer((_req, res) => res.end('{"ok":true}'));
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const { port } = service.address() as { port: number };
  const file = join(dir, 'tools.yaml');
  writeFileSync(
    file,
    `schemaVersion: '1.0'
tools:
  - name: lookup
    execution: { type: http, method: GET, url: 'http://127.0.0.1:${port}/lookup' }
`,
  );
  const collector = await startDroppingCollector();
  try {
    const offPathUs = offPathPerRun();
    const off: Phase[] = [];
    const on: Phase[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      off.push(await runPhase(file, {}));
      on.push(await runPhase(file, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }));
    }
    const median = (phases: Phase[], key: keyof Phase) =>
      percentile(
        phases.map((phase) => phase[key]),
        50,
      );
    // Each round's on against its own off: the machine's load drifts less within a round.
    const ratio = (key: keyof Phase) =>
      percentile(
        on.map((phase, round) => phase[key] / off[round]![key]),
        50,
      );
    const list = (phases: Phase[]) => phases.map((phase) => Math.round(phase.perSecond)).join(', ');
    const offRate = median(off, 'perSecond');
    return [
      {
        name: `blocking runs calling one http tool, tracing off (rounds: ${list(off)})`,
        value: offRate,
        unit: 'runs/s',
      },
      compared(
        `the same, tracing on, OTLP to a local collector (rounds: ${list(on)})`,
        median(on, 'perSecond'),
        'runs/s',
        {
          name: 'off',
          value: offRate,
        },
      ),
      {
        name: 'runs per second, tracing on / off (median of the rounds)',
        value: ratio('perSecond'),
        unit: 'ratio',
        target: '> 0.85 (on costs under 15%)',
      },
      compared('server CPU per run, tracing on', median(on, 'cpuUsPerRun'), 'us', {
        name: 'off',
        value: median(off, 'cpuUsPerRun'),
      }),
      {
        name: 'server CPU per run, tracing on / off (median of the rounds)',
        value: ratio('cpuUsPerRun'),
        unit: 'ratio',
        target: '< 1.15',
      },
      compared(
        'tracing calls of one run with tracing off',
        offPathUs,
        'us',
        { name: 'server CPU per run, tracing off', value: median(off, 'cpuUsPerRun') },
        '< 0.02 (off costs under 2%)',
      ),
    ];
  } finally {
    collector.stop();
    service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One phase's runs per second and CPU microseconds per run of its process. */
interface Phase {
  perSecond: number;
  cpuUsPerRun: number;
}

/** Runs one phase in its own process (asynchronously: the tool's service answers from this one). */
async function runPhase(file: string, env: Record<string, string>): Promise<Phase> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const child = spawn(
    process.execPath,
    [
      '--conditions=@mci/source',
      '--no-node-snapshot',
      '--disable-warning=ExperimentalWarning',
      phase,
      file,
      String(PHASE_MS),
    ],
    { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`tracing phase failed: ${stdout}`);
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Phase;
}

/**
 * Microseconds the tracing calls of one run take with tracing off (the SDK not loaded in this
 * process): three state transitions (queued, running, idle), the trace fields of their log lines,
 * the request middleware's check and the execution wrapper.
 */
function offPathPerRun(): number {
  if (isTracing()) throw new Error('tracing is on in the bench process');
  const live: TracedRun = {
    record: { pid: 1, owner: 'local', state: 'queued', status: null } as TracedRun['record'],
    run: { run: 1, state: 'queued', status: null },
  };
  const once = () => {
    for (const state of ['queued', 'running', 'idle'] as const) {
      live.record.state = state;
      traceRunTransition(live);
      inRunContext(live, traceLogFields);
    }
    isTracing();
    traceExecution(live.trace?.context, undefined, undefined, undefined);
  };
  for (let i = 0; i < 10_000; i++) once();
  const rounds = 200_000;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) once();
  return ((performance.now() - started) * 1000) / rounds;
}

/** An OTLP/HTTP endpoint in another process that answers every export 200 and keeps nothing. */
async function startDroppingCollector(): Promise<{ url: string; stop(): void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.end()); })
        .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<string>((resolve) =>
    child.stdout.once('data', (data) => resolve(String(data).trim())),
  );
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}
