import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type MciClient } from '@mci/client';
import type { ServerEvent } from '@mci/protocol';
import { describe, expect, it } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { freshDatabase } from './support/postgres.ts';
import { type ServeProcess, serveProcesses } from './support/serve-process.ts';

// Two `mci serve --cluster` nodes on one PostgreSQL database count a principal's runs per minute
// together: creates sent to both at once never go past its quota, and a node killed with -9 takes
// nothing of the count with it. A `maxRunning` or `maxQueued` given in the quotas holds across the
// nodes too: each node counts the principal's processes on the others from the cluster's events.

const { dir, file: tools } = greetToolDir('mci-cluster-quotas-');
const OPERATOR = 'operator-token-0e7d3b91';
const ALICE = 'alice-token-52c8f4a6';
const BOB = 'bob-token-c3a1907e';
const config = join(dir, 'mci.yaml');
writeFileSync(
  config,
  `tokens:
  - { token: ${OPERATOR}, role: operator, id: operator }
  - { token: ${ALICE}, role: client, id: alice }
  - { token: ${BOB}, role: client, id: bob }
quotas:
  principals:
    alice: { runsPerMinute: 4 }
limits: { rateLimitPerSecond: 100000 }
`,
);
const CAROL = 'carol-token-9b4e27d1';
const DAVE = 'dave-token-61f0c8a3';
const concurrentConfig = join(dir, 'mci-concurrent.yaml');
writeFileSync(
  concurrentConfig,
  `tokens:
  - { token: ${OPERATOR}, role: operator, id: operator }
  - { token: ${BOB}, role: client, id: bob }
  - { token: ${CAROL}, role: client, id: carol }
  - { token: ${DAVE}, role: client, id: dave }
quotas:
  principals:
    carol: { maxRunning: 1 }
    dave: { maxRunning: 1, maxQueued: 3 }
limits: { rateLimitPerSecond: 100000 }
`,
);
const { serveClusterNode } = serveProcesses(dir);

/** Node `name` of the cluster on `db`, with the config file `configFile` and `args`. */
const node = (db: string, name: string, configFile = config, ...args: string[]) =>
  serveClusterNode(db, name, ['--config', configFile, '--file', tools, '--concurrency', '2', ...args]);

/** Stops the nodes still running (SIGTERM) and waits for them to exit. */
async function stop(nodes: ServeProcess[]): Promise<void> {
  for (const n of nodes)
    if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGTERM');
  await Promise.all(nodes.map((n) => n.exited));
}

/**
 * Nodes `PREFIX1` and `PREFIX2` of a cluster on a fresh database, with the `maxRunning` and
 * `maxQueued` quotas and short leases, and an operator {@link watch} on each; disposing stops the
 * nodes and drops the database.
 */
async function startConcurrentPair(prefix: string) {
  const db = await freshDatabase();
  const nodes = [1, 2].map((i) => node(db.url, `${prefix}${i}`, concurrentConfig, '--node-lease-ms', '2000'));
  const clients: MciClient[] = [];
  const stopAll = async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await stop(nodes);
    await db[Symbol.asyncDispose]();
  };
  try {
    const urls = await Promise.all(nodes.map((n) => n.url));
    for (const url of urls) clients.push(await connect(url, { token: OPERATOR }));
    const [seen1, seen2] = clients.map(watch) as [ReturnType<typeof watch>, ReturnType<typeof watch>];
    return { nodes, urls, seen1, seen2, [Symbol.asyncDispose]: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** POST /processes as `token` on `url` (`code`: the program): the status, `Retry-After` and body. */
async function create(url: string, token: string, code = 'output(1)') {
  const response = await fetch(`${url}/processes`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ code, timeoutMs: 120_000 }),
  });
  const body = (await response.json()) as { code?: string; pid?: number; message?: string };
  return {
    status: response.status,
    retryAfter: response.headers.get('Retry-After'),
    code: body.code,
    pid: body.pid ?? -1,
    message: body.message,
  };
}

const sleepCode = (ms: number) => `await new Promise((resolve) => setTimeout(resolve, ${ms}))`;

/** The operator's view of every `process` event through `client`, and a wait for one. */
function watch(client: MciClient) {
  const events: Array<Extract<ServerEvent, { type: 'process' }>> = [];
  const waiters: Array<() => void> = [];
  client.subscribe(
    { all: true },
    {
      onEvent: (event) => {
        if (event.type !== 'process') return;
        events.push(event);
        for (const wake of waiters.splice(0)) wake();
      },
    },
  );
  const seen = (pid: number, state: string) => events.some((e) => e.pid === pid && e.state === state);
  return {
    events,
    /** Resolves once process `pid` was seen in `state`. */
    async until(pid: number, state: string): Promise<void> {
      while (!seen(pid, state)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

/** Waits for the next minute when less than `needMs` of this one is left (the quota's window). */
async function roomInWindow(needMs = 30_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

describe('quotas in a cluster', { timeout: 120_000 }, () => {
  it('counts runsPerMinute across two nodes through the database, and past a kill -9 of one', async () => {
    await using db = await freshDatabase();
    const nodes = [node(db.url, 'q1'), node(db.url, 'q2')];
    try {
      const [url1, url2] = await Promise.all(nodes.map((n) => n.url));
      await roomInWindow();
      // Ten creates at once, alternating between the nodes: four go in, six are refused.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => create(i % 2 === 0 ? url1! : url2!, ALICE)),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(4);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(6);
      for (const answer of refused) {
        expect(answer.code).toBe('QUOTA_EXCEEDED');
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      // Alice's processes: exactly the four admitted, on whichever node.
      const list = await fetch(`${url1}/processes`, { headers: { Authorization: `Bearer ${ALICE}` } });
      expect(((await list.json()) as { processes: unknown[] }).processes).toHaveLength(4);
      // Bob's quota is his own.
      expect((await create(url2!, BOB)).status).toBe(201);

      // The count lives in the database: killing a node forgets nothing.
      nodes[0]!.child.kill('SIGKILL');
      await nodes[0]!.exited;
      expect(await create(url2!, ALICE)).toMatchObject({ status: 429, code: 'QUOTA_EXCEEDED' });
      const metrics = await fetch(`${url2}/metrics`, { headers: { Authorization: `Bearer ${OPERATOR}` } });
      expect(await metrics.text()).toContain('mci_principal_window_runs{principal="alice"} 4');
    } finally {
      await stop(nodes);
    }
  });

  it('runs one process of a principal with maxRunning 1 at a time across two nodes, while another principal runs', async () => {
    await using pair = await startConcurrentPair('r');
    const { urls, seen1, seen2 } = pair;
    // Carol's first run is known to both nodes before the rest are sent: two nodes may start a
    // principal's runs within the delay of an event (docs/cluster.md, "Quotas").
    const first = await create(urls[0]!, CAROL, sleepCode(1000));
    expect(first.status).toBe(201);
    await seen2.until(first.pid, 'running');
    const rest = await Promise.all(
      Array.from({ length: 9 }, (_, i) => create(urls[i % 2]!, CAROL, sleepCode(200))),
    );
    const bob = await Promise.all(
      Array.from({ length: 4 }, (_, i) => create(urls[i % 2]!, BOB, sleepCode(200))),
    );
    for (const answer of [...rest, ...bob]) expect(answer.status).toBe(201);
    const carol = [first, ...rest].map((a) => a.pid);
    for (const pid of [...carol, ...bob.map((a) => a.pid)]) await seen1.until(pid, 'idle');

    // In log order (every node sees the same), at most one of Carol's processes runs at once.
    const running = new Set<number>();
    let most = 0;
    for (const event of seen1.events) {
      if (!carol.includes(event.pid)) continue;
      if (event.state === 'running' || event.state === 'terminating') running.add(event.pid);
      else running.delete(event.pid);
      most = Math.max(most, running.size);
    }
    expect(most).toBe(1);
    // Bob's runs did not wait for Carol's queue: each started before her last one ended.
    const index = (pid: number, state: string) =>
      seen1.events.findIndex((e) => e.pid === pid && e.state === state);
    const carolDone = Math.max(...carol.map((pid) => index(pid, 'idle')));
    for (const { pid } of bob) expect(index(pid, 'running')).toBeLessThan(carolDone);
    for (const pid of carol)
      expect(seen1.events.find((e) => e.pid === pid && e.state === 'idle')).toMatchObject({
        status: 'success',
      });
  });

  it('refuses a create past maxQueued counted over both nodes, and after a kill -9 runs the next queued process elsewhere', async () => {
    await using pair = await startConcurrentPair('m');
    const { nodes, urls, seen1, seen2 } = pair;
    // Dave runs one process on m1 (maxRunning 1); each create waits until the other node saw it.
    const long = await create(urls[0]!, DAVE, sleepCode(60_000));
    await seen2.until(long.pid, 'running');
    const queued: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await create(urls[(i + 1) % 2]!, DAVE, 'output(1)');
      expect(answer.status).toBe(201);
      await (i % 2 === 0 ? seen1 : seen2).until(answer.pid, 'queued');
      queued.push(answer.pid);
    }
    // Three waiting over the two nodes: his fourth is refused on either node.
    for (const url of urls)
      expect(await create(url!, DAVE)).toMatchObject({
        status: 429,
        code: 'QUOTA_EXCEEDED',
        message: expect.stringContaining('in the cluster'),
      });
    // Bob's share is his own.
    expect((await create(urls[0]!, BOB)).status).toBe(201);
    for (const pid of queued)
      expect(seen2.events.some((e) => e.pid === pid && e.state === 'running')).toBe(false);

    // m1 dies with Dave's run: m2 ends it once m1's lease expires, then runs his queued processes.
    nodes[0]!.child.kill('SIGKILL');
    await nodes[0]!.exited;
    await seen2.until(long.pid, 'idle');
    for (const pid of queued) await seen2.until(pid, 'idle');
    expect(seen2.events.find((e) => e.pid === long.pid && e.state === 'idle')).toMatchObject({
      status: 'failed',
    });
    for (const pid of queued)
      expect(seen2.events.find((e) => e.pid === pid && e.state === 'idle')).toMatchObject({
        status: 'success',
      });
  });
});
