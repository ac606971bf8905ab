// One phase of tracing.bench.ts, in a process of its own (the OpenTelemetry SDK is global to a
// process and cannot be unloaded): blocking runs per second (`POST /processes` with `block`) of a
// program calling one http tool, from CLIENTS concurrent HTTP clients, through an in-process server.
// Tracing is on when the OTEL_* variables of this process ask for it. Prints the runs per second and
// the CPU time of this process (the server and the load; sandbox workers are processes of their own)
// per run, in microseconds, as one JSON line.
// Usage: node --conditions=@mci/source --no-node-snapshot tracing-phase.ts TOOL_FILE MS
import { createLogger } from '../src/logger.ts';
import { createServer } from '../src/server.ts';
import { startTracing, tracingRequested } from '../src/tracing/start-tracing.ts';
import { loadTest } from './ws-bench-client.ts';

const CLIENTS = 8;
const code = 'const r = await tools.lookup({}); output(r.isError);';
const [file, ms] = process.argv.slice(2);
if (!file || !ms) throw new Error('usage: tracing-phase.ts TOOL_FILE MS');

const tracing = await startTracing();
if (tracingRequested() !== (tracing !== undefined)) throw new Error('tracing did not start');
const server = await createServer({
  port: 0,
  file,
  // Logged at info as `mci serve` does, to a sink: the trace fields of log lines are part of the cost.
  logger: createLogger({ level: 'info', destination: { write: () => true } }),
  // The bench drives one principal far past the default request budget.
  limits: { rateLimitPerSecond: 1_000_000 },
  maxQueue: 100_000,
  check: 'off',
});
const run = async () => {
  const response = await fetch(`${server.url}/processes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, block: true }),
  });
  const body = (await response.json()) as { status?: string };
  if (body.status !== 'success') throw new Error(`bench run ended ${JSON.stringify(body)}`);
};
await loadTest(CLIENTS, 1500, run);
const cpu = process.cpuUsage();
const { perSecond, samples } = await loadTest(CLIENTS, Number(ms), run);
const used = process.cpuUsage(cpu);
const cpuUsPerRun = (used.user + used.system) / samples.length;
await server.close({ graceMs: 0 });
await tracing?.shutdown();
process.stdout.write(`${JSON.stringify({ perSecond, cpuUsPerRun })}\n`);
process.exit(0);
