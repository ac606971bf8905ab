// `pnpm soak`: a standing soak of hostile programs against a real `mci serve` (not part of `pnpm test`).
//
//   pnpm soak [--processes 2400] [--connections 4] [--in-flight 4] [--seconds S] [--idle-seconds 60]
//             [--concurrency 2] [--json FILE] [--only NAME,NAME]
//
// N client connections (each its own token, so its own principal) keep M programs in flight each, drawn
// from a mix of hostile programs (tight loops with short timeouts, never-resolving promises, memory
// bombs, deep recursion, output and console floods, throws of odd values, unhandled rejections, huge
// returns, oversize code), kill some while running or queued, and replay the event log now and then.
// It stops after `--processes` creations (or `--seconds`), waits `--idle-seconds`, and checks:
//   - every created process reached idle exactly once (one `idle` event per pid on an operator feed);
//   - the WebSocket and HTTP views of every process agree (state, status, run);
//   - `/healthz` p99 latency during the run (sampled every 50 ms) is under 100 ms;
//   - RSS of the server (<= 300 MB) and of each sandbox worker (<= 400 MB) after the idle minute.
// Prints a report (and writes it as JSON with --json); exits 1 when a check fails.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect, type MciClient, type ServerEvent } from '../packages/client/src/index.ts';

const { values: flags } = parseArgs({
  options: {
    processes: { type: 'string', default: '2400' },
    connections: { type: 'string', default: '4' },
    'in-flight': { type: 'string', default: '4' },
    seconds: { type: 'string' },
    'idle-seconds': { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '2' },
    json: { type: 'string' },
    only: { type: 'string' },
  },
});
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

/** A hostile program: its code and options, and how likely it is drawn (weight). */
interface Program {
  name: string;
  weight: number;
  code: string;
  timeoutMs?: number;
  memoryLimitMb?: number;
  /** Refused at creation (CODE_TOO_LARGE), never a process. */
  refused?: boolean;
}

const PROGRAMS: Program[] = [
  { name: 'plain', weight: 6, code: 'output(1 + 1)' },
  { name: 'tight-loop', weight: 3, code: 'while (true) {}', timeoutMs: 200 },
  { name: 'never-resolves', weight: 3, code: 'await new Promise(() => {})', timeoutMs: 300 },
  {
    name: 'memory-bomb',
    weight: 2,
    code: 'const hoard = []; while (true) hoard.push(new Array(1e6).fill(hoard.length))',
    memoryLimitMb: 32,
    timeoutMs: 3000,
  },
  { name: 'deep-recursion', weight: 2, code: 'const f = (n) => f(n + 1) + 1; f(0)' },
  { name: 'output-flood', weight: 1, code: 'for (let i = 0; i < 2e6; i++) output(0)', timeoutMs: 2000 },
  {
    name: 'console-flood',
    weight: 1,
    code: "for (let i = 0; i < 2e5; i++) console.log('x'.repeat(100), i)",
    timeoutMs: 2000,
  },
  { name: 'throw-null', weight: 1, code: 'throw null' },
  { name: 'throw-symbol', weight: 1, code: "throw Symbol('odd')" },
  {
    name: 'throw-hostile',
    weight: 1,
    code: 'throw { get message() { throw new Error("nested") }, toString() { throw 1 } }',
  },
  { name: 'throw-proxy', weight: 1, code: 'throw new Proxy({}, { get() { throw new Error("trap") } })' },
  {
    name: 'unhandled-rejection',
    weight: 2,
    code: "Promise.reject(new Error('nobody listens')); output('after')",
  },
  { name: 'huge-return', weight: 1, code: "return 'x'.repeat(8 * 1024 * 1024)" },
  { name: 'huge-object', weight: 1, code: 'return Array.from({ length: 3e5 }, (_, i) => ({ i, s: "abc" }))' },
  { name: 'oversize-code', weight: 1, code: `// ${'x'.repeat(200 * 1024)}\noutput(1)`, refused: true },
];
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
    '0',
    '--db',
    join(dir, 'soak.db'),
    '--concurrency',
    flags.concurrency,
    '--rate-limit',
    '100000',
    '--file',
    join(root, 'examples/mci.yaml'),
  ],
  {
    cwd: dir,
    env: {
      ...process.env,
      MCI_LOG_LEVEL: 'warn',
      MCI_API_KEY: operatorToken,
      MCI_CLIENT_TOKENS: clientTokens.join(','),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
let serverLog = '';
const url = await new Promise<string>((resolve, reject) => {
  server.stderr.on('data', (data: Buffer) => {
    serverLog = (serverLog + data.toString()).slice(-20_000);
    const found = /listening on (http:\/\/\S+)/.exec(serverLog);
    if (found) resolve(found[1]!);
  });
  server.once('exit', (code) => reject(new Error(`mci serve exited ${code}:\n${serverLog}`)));
});
const serverPid = server.pid!;
process.stderr.write(`soak: server ${serverPid} at ${url}, ${total} processes, ${connections}x${inFlight}\n`);

/** RSS in MB of a pid (0 if gone). */
function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
    return line ? Math.round(Number(line[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** Every descendant pid of `pid` (the sandbox workers). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const child of parents.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

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

// `/healthz` is timed from a process of its own, so the soak's own work does not count as server latency.
const SAMPLER = `
const latencies = [];
let running = true;
process.on('message', () => { running = false; });
(async () => {
  while (running) {
    const started = performance.now();
    try {
      await fetch(process.argv[1] + '/healthz', { signal: AbortSignal.timeout(30000) });
      latencies.push(performance.now() - started);
    } catch {
      latencies.push(30000);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.send(latencies, () => process.exit(0));
})();`;
const samplerProcess = spawn(process.execPath, ['-e', SAMPLER, url], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const healthz = new Promise<number[]>((resolve) =>
  samplerProcess.once('message', (m) => resolve(m as number[])),
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
const statuses = new Map<string, number>();
let started = 0;
const startedAt = Date.now();

async function one(client: MciClient): Promise<void> {
  const program = draw();
  started++;
  let pid: number;
  try {
    const snapshot = await client.createProcess(program.code, {
      ...(program.timeoutMs !== undefined && { timeoutMs: program.timeoutMs }),
      ...(program.memoryLimitMb !== undefined && { memoryLimitMb: program.memoryLimitMb }),
    });
    pid = snapshot.pid;
  } catch (error) {
    if (program.refused && (error as { code?: string }).code === 'CODE_TOO_LARGE') counts.refused++;
    else {
      counts.refusedUnexpectedly++;
      process.stderr.write(`soak: ${program.name} refused: ${(error as Error).message}\n`);
    }
    return;
  }
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
await Promise.all(
  clients.flatMap((client) =>
    Array.from({ length: inFlight }, async () => {
      while (started < total && Date.now() < deadline) {
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
  const response = await fetch(`${url}/processes/${pid}`, {
    headers: { Authorization: `Bearer ${operatorToken}` },
  });
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

const sorted = [...(await healthz)].sort((a, b) => a - b);
const quantile = (q: number) =>
  Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
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
  healthz: { samples: sorted.length, p50: quantile(0.5), p99: quantile(0.99), max: quantile(1) },
  rssAfterIdleMb: { server: serverRssMb, workers: workers.map((w) => w.rssMb) },
  peakRssMb: { server: peakServerMb, worker: peakWorkerMb },
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
