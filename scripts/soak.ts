// `pnpm soak`: a standing soak of hostile programs against a real `mci serve` (not part of `pnpm test`).
//
//   pnpm soak [--processes 2400] [--connections 4] [--in-flight 4] [--seconds S] [--idle-seconds 60]
//             [--concurrency 2] [--port 0] [--json FILE] [--only NAME,NAME] [--server-log FILE]
//             [--abusive] [--abuse-seconds 40] [--help]
//
// N client connections (each its own token, so its own principal) keep M programs in flight each, drawn
// from a mix of hostile programs (tight loops with short timeouts, never-resolving promises, memory
// bombs, deep recursion, output and console floods, throws of odd values, unhandled rejections, huge
// returns, oversize code), kill some while running or queued, and replay the event log now and then.
// It stops after `--processes` creations (or `--seconds`), waits `--idle-seconds`, and checks:
//   - every created process reached idle exactly once (one `idle` event per pid on an operator feed);
//   - the WebSocket and HTTP views of every process agree (state, status, run);
//   - `/healthz` p99 latency during the run (sampled every 50 ms) is under 100 ms, next to a bare
//     node:http server timed the same way (the machine's share of the latency);
//   - RSS of the server (<= 300 MB) and of each sandbox worker (<= 400 MB) after the idle minute.
// Prints a report (and writes it as JSON with --json); exits 1 when a check fails. `--server-log` keeps
// the server's log lines (JSON, debug level) in FILE.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type MciClient, type ServerEvent } from '../packages/client/src/index.ts';
import { abuse } from './soak/abuse.ts';
import { descendants, rssMb } from './soak/proc.ts';
import { soakFlags } from './soak/options.ts';
import { type Program, PROGRAMS } from './soak/programs.ts';

const flags = soakFlags();
const serverLogFile = flags['server-log'];
const total = Number(flags.processes);
const connections = Number(flags.connections);
const inFlight = Number(flags['in-flight']);
const deadline =
  flags.seconds === undefined ? Number.POSITIVE_INFINITY : Date.now() + Number(flags.seconds) * 1000;
const idleMs = Number(flags['idle-seconds']) * 1000;

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'mci-soak-'));
const operatorToken = 'soak-operator';
const clientTokens = Array.from({ length: connections }, (_, i) => `soak-client-${i}`);
const abuserToken = 'soak-abuser-token';

const only = flags.only?.split(',');
if (only) PROGRAMS.splice(0, PROGRAMS.length, ...PROGRAMS.filter((p) => only.includes(p.name)));
const weights = PROGRAMS.reduce((sum, p) => sum + p.weight, 0);
const draw = (): Program => {
  let pick = Math.random() * weights;
  for (const program of PROGRAMS) {
    pick -= program.weight;
    if (pick < 0) return program;
  }
  return PROGRAMS[0]!;
};

// --- the server ---------------------------------------------------------------------------------

const server = spawn(
  process.execPath,
  [
    '--conditions=@mci/source',
    '--disable-warning=ExperimentalWarning',
    join(root, 'apps/server/src/cli/main.ts'),
    'serve',
    '--port',
    flags.port,
    '--db',
    join(dir, 'soak.db'),
    '--concurrency',
    flags.concurrency,
    // With --abusive the default request budget applies (the well-behaved clients stay under it).
    ...(flags.abusive ? [] : ['--rate-limit', '100000']),
    '--file',
    join(root, 'examples/mci.yaml'),
  ],
  {
    cwd: dir,
    env: {
      ...process.env,
      MCI_LOG_LEVEL: serverLogFile ? 'debug' : 'warn',
      MCI_API_KEY: operatorToken,
      MCI_CLIENT_TOKENS: [...clientTokens, ...(flags.abusive ? [abuserToken] : [])].join(','),
    },
    stdio: ['ignore', serverLogFile ? openSync(serverLogFile, 'w') : 'ignore', 'pipe'],
  },
);
let serverLog = '';
const url = await new Promise<string>((resolve, reject) => {
  server.stderr!.on('data', (data: Buffer) => {
    serverLog = (serverLog + data.toString()).slice(-20_000);
    const found = /listening on (http:\/\/\S+)/.exec(serverLog);
    if (found) resolve(found[1]!);
  });
  server.once('exit', (code) => reject(new Error(`mci serve exited ${code}:\n${serverLog}`)));
});
const serverPid = server.pid!;
process.stderr.write(`soak: server ${serverPid} at ${url}, ${total} processes, ${connections}x${inFlight}\n`);

// --- observers ----------------------------------------------------------------------------------

const operator = await connect(url, { token: operatorToken });
const idleEvents = new Map<number, number>();
const lastProcessEvent = new Map<number, Extract<ServerEvent, { type: 'process' }>>();
const feed = operator.subscribe({ all: true }, { since: (await operator.opened).seq });
const observing = (async () => {
  for await (const event of feed) {
    if (event.type !== 'process') continue;
    lastProcessEvent.set(event.pid, event);
    if (event.state === 'idle' && event.run > 0)
      idleEvents.set(event.pid, (idleEvents.get(event.pid) ?? 0) + 1);
  }
})();

// `/healthz` is timed from a process of its own, so the soak's own work does not count as server
// latency. The same process times a bare `node:http` server (its own process too) the same way: the
// baseline says how much of the latency is the machine (CPU contention) rather than the MCI server.
const BASELINE = `require('node:http').createServer((q, s) => s.end('{"status":"ok"}')).listen(0, '127.0.0.1', function () { process.send(this.address().port); });`;
const baselineProcess = spawn(process.execPath, ['-e', BASELINE], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const baselinePort = await new Promise<number>((resolve) =>
  baselineProcess.once('message', (m) => resolve(m as number)),
);
const SAMPLER = `
const samples = { server: [], baseline: [] };
let running = true;
process.on('message', () => { running = false; });
const time = async (url, into) => {
  const started = performance.now();
  try {
    await (await fetch(url, { signal: AbortSignal.timeout(30000) })).text();
    into.push(performance.now() - started);
  } catch {
    into.push(30000);
  }
};
(async () => {
  while (running) {
    await time(process.argv[1] + '/healthz', samples.server);
    await time(process.argv[2] + '/healthz', samples.baseline);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.send(samples, () => process.exit(0));
})();`;
const samplerProcess = spawn(process.execPath, ['-e', SAMPLER, url, `http://127.0.0.1:${baselinePort}`], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const healthz = new Promise<{ server: number[]; baseline: number[] }>((resolve) =>
  samplerProcess.once('message', (m) => resolve(m as { server: number[]; baseline: number[] })),
);
let peakServerMb = 0;
let peakWorkerMb = 0;
const rssTimer = setInterval(() => {
  peakServerMb = Math.max(peakServerMb, rssMb(serverPid));
  for (const pid of descendants(serverPid)) peakWorkerMb = Math.max(peakWorkerMb, rssMb(pid));
}, 1000);

// --- the load -----------------------------------------------------------------------------------

const created: Array<{ pid: number; client: MciClient; program: string }> = [];
const counts = {
  created: 0,
  refused: 0,
  refusedUnexpectedly: 0,
  killsRunning: 0,
  killsQueued: 0,
  replays: 0,
};
const byProgram = new Map<string, number>();
/** Milliseconds from create to idle of each process of the well-behaved clients. */
const runMs: number[] = [];
const statuses = new Map<string, number>();
let inFlightCreates = 0;
const startedAt = Date.now();

async function one(client: MciClient): Promise<void> {
  const program = draw();
  let pid: number;
  const began = performance.now();
  inFlightCreates++;
  try {
    const snapshot = await client.createProcess(program.code, {
      ...(program.timeoutMs !== undefined && { timeoutMs: program.timeoutMs }),
      ...(program.memoryLimitMb !== undefined && { memoryLimitMb: program.memoryLimitMb }),
    });
    pid = snapshot.pid;
  } catch (error) {
    inFlightCreates--;
    if (program.refused && (error as { code?: string }).code === 'CODE_TOO_LARGE') counts.refused++;
    else {
      counts.refusedUnexpectedly++;
      process.stderr.write(`soak: ${program.name} refused: ${(error as Error).message}\n`);
    }
    return;
  }
  inFlightCreates--;
  counts.created++;
  created.push({ pid, client, program: program.name });
  byProgram.set(program.name, (byProgram.get(program.name) ?? 0) + 1);
  const roll = Math.random();
  if (roll < 0.05) {
    // Kill while queued or just started.
    await client.signal(pid, 'kill').then(
      (snapshot) =>
        snapshot.state === 'queued' || snapshot.status === 'canceled'
          ? counts.killsQueued++
          : counts.killsRunning++,
      () => {},
    );
  } else if (roll < 0.1) {
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
    await client.signal(pid, 'kill').then(
      () => counts.killsRunning++,
      () => {},
    );
  }
  const done = await client.wait(pid, { timeoutMs: 120_000 });
  runMs.push(performance.now() - began);
  statuses.set(String(done.status), (statuses.get(String(done.status)) ?? 0) + 1);
  if (Math.random() < 0.01) {
    // A replay of this client's whole log, read for a moment and dropped.
    counts.replays++;
    const replay = client.subscribe({ all: true }, { since: 0 });
    await Promise.race([replay.ready, new Promise((resolve) => setTimeout(resolve, 2000))]).catch(() => {});
    replay.close();
  }
}

const clients = await Promise.all(
  clientTokens.map((token) => connect(url, { token, requestTimeoutMs: 180_000 })),
);
let lastReport = Date.now();
const abused = flags.abusive ? abuse(url, abuserToken, Number(flags['abuse-seconds']) * 1000) : undefined;
await Promise.all(
  clients.flatMap((client) =>
    Array.from({ length: inFlight }, async () => {
      while (counts.created + inFlightCreates < total && Date.now() < deadline) {
        await one(client);
        if (Date.now() - lastReport > 10_000) {
          lastReport = Date.now();
          process.stderr.write(
            `soak: ${counts.created} created, ${Math.round((Date.now() - startedAt) / 1000)} s, server ${rssMb(serverPid)} MB\n`,
          );
        }
      }
    }),
  ),
);
const abuseReport = await abused;
const loadSeconds = (Date.now() - startedAt) / 1000;
samplerProcess.send('stop');

// --- checks ---------------------------------------------------------------------------------------

// Let the operator feed catch up with the last events.
for (let i = 0; i < 100 && created.some(({ pid }) => (idleEvents.get(pid) ?? 0) < 1); i++)
  await new Promise((resolve) => setTimeout(resolve, 100));
const notOnce = created
  .filter(({ pid }) => idleEvents.get(pid) !== 1)
  .map(({ pid }) => ({ pid, idle: idleEvents.get(pid) ?? 0 }));
const disagree: Array<{ pid: number; ws: string; http: string }> = [];
for (const { pid, client } of created) {
  const ws = await client.get(pid);
  let response = await fetch(`${url}/processes/${pid}`, {
    headers: { Authorization: `Bearer ${operatorToken}` },
  });
  // These reads are past the default request budget of one principal (--abusive keeps it): wait.
  while (response.status === 429) {
    await response.body?.cancel();
    await new Promise((resolve) =>
      setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000),
    );
    response = await fetch(`${url}/processes/${pid}`, {
      headers: { Authorization: `Bearer ${operatorToken}` },
    });
  }
  const http = (await response.json()) as { state: string; status: string | null; run: number };
  const event = lastProcessEvent.get(pid);
  const views = [ws, http, event].map((v) => `${v?.state}/${v?.status}/${v?.run}`);
  if (new Set(views).size !== 1) disagree.push({ pid, ws: views[0]!, http: `${views[1]} event ${views[2]}` });
}

process.stderr.write(`soak: load done in ${Math.round(loadSeconds)} s; idle for ${idleMs / 1000} s\n`);
await new Promise((resolve) => setTimeout(resolve, idleMs));
clearInterval(rssTimer);
const workers = descendants(serverPid).map((pid) => ({ pid, rssMb: rssMb(pid) }));
const serverRssMb = rssMb(serverPid);
// The server's own view of its memory: what of the RSS is V8 heap, and what is outside it.
const metrics = await (
  await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${operatorToken}` } })
).text();
const metricMb = (name: string) =>
  Math.round(Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN) / 2 ** 20);
const serverMemoryMb = {
  heapTotal: metricMb('nodejs_heap_size_total_bytes'),
  heapUsed: metricMb('nodejs_heap_size_used_bytes'),
  external: metricMb('nodejs_external_memory_bytes'),
};

const latencies = await healthz;
baselineProcess.kill();
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const quantile = (q: number) =>
    Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
  return { samples: sorted.length, p50: quantile(0.5), p99: quantile(0.99), max: quantile(1) };
};
const report = {
  processes: counts.created,
  refused: counts.refused,
  refusedUnexpectedly: counts.refusedUnexpectedly,
  killsRunning: counts.killsRunning,
  killsQueued: counts.killsQueued,
  replays: counts.replays,
  byProgram: Object.fromEntries(byProgram),
  statuses: Object.fromEntries(statuses),
  loadSeconds: Math.round(loadSeconds),
  healthz: summary(latencies.server),
  baselineHealthz: summary(latencies.baseline),
  loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
  rssAfterIdleMb: { server: serverRssMb, workers: workers.map((w) => w.rssMb) },
  serverMemoryAfterIdleMb: serverMemoryMb,
  peakRssMb: { server: peakServerMb, worker: peakWorkerMb },
  wellBehaved: { runs: runMs.length, ...summary(runMs), refusedUnexpectedly: counts.refusedUnexpectedly },
  ...(abuseReport && { abuse: abuseReport }),
  notIdleExactlyOnce: notOnce.slice(0, 20),
  notIdleExactlyOnceCount: notOnce.length,
  viewsDisagree: disagree.slice(0, 20),
  viewsDisagreeCount: disagree.length,
};
const checks = {
  idleExactlyOnce: notOnce.length === 0,
  viewsAgree: disagree.length === 0,
  noUnexpectedRefusal: counts.refusedUnexpectedly === 0,
  healthzP99Under100Ms: report.healthz.p99 < 100,
  serverRssWithin300Mb: serverRssMb <= 300,
  workersRssWithin400Mb: workers.every((w) => w.rssMb <= 400),
  ...(abuseReport && {
    abuseContained:
      // Every frame answered, most refused (a replay with nothing to send ends at once and frees its place).
      abuseReport.replayFlood.replies + abuseReport.replayFlood.refused === abuseReport.replayFlood.frames &&
      abuseReport.replayFlood.refused > abuseReport.replayFlood.frames / 2 &&
      abuseReport.queueFlood.refused > 0 &&
      abuseReport.webSockets.refused > 0 &&
      abuseReport.forgedMetadata === 1 &&
      abuseReport.requestBurst.limited > 0,
  }),
};
process.stdout.write(`${JSON.stringify({ ...report, checks }, null, 2)}\n`);
if (flags.json) writeFileSync(flags.json, JSON.stringify({ ...report, checks }, null, 2));

feed.close();
await Promise.all(clients.map((client) => client.close()));
await operator.close();
await observing.catch(() => {});
server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
rmSync(dir, { recursive: true, force: true });
process.exitCode = Object.values(checks).every(Boolean) ? 0 : 1;
