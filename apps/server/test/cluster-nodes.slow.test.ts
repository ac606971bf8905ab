import { connect, type MciClient } from '@mci/client';
import type { ServerEvent } from '@mci/protocol';
import { describe, expect, it, onTestFailed } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { adminQuery, adminQueryOn, freshDatabase } from './support/postgres.ts';
import { type ServeProcess, serveProcesses } from './support/serve-process.ts';

// Several `mci serve --cluster` nodes (real processes) on one PostgreSQL database act as one system:
// pids unique across nodes, every event seen from every node once and in order, kill from any node,
// and a node killed with -9 loses nothing (a survivor ends its running processes "interrupted" and
// runs its queued ones).

const { dir, file: tools } = greetToolDir('mci-cluster-nodes-', 'Hello!');
const { serveClusterNode } = serveProcesses(dir);

/**
 * `count` nodes named n1, n2, ... on a fresh database (`db`, dropped after the nodes stop), each with
 * two sandbox slots, and a client on each; leases of `leaseMs` (short, so a killed node's lease
 * expires within the test, long enough for a busy machine).
 */
async function startNodes(count: number, leaseMs = 2000, args: string[] = []) {
  const db = await freshDatabase();
  const nodes: ServeProcess[] = [];
  for (let i = 1; i <= count; i++)
    nodes.push(
      serveClusterNode(db.url, `n${i}`, [
        '--file',
        tools,
        '--concurrency',
        '2',
        '--node-lease-ms',
        String(leaseMs),
        '--rate-limit',
        '100000',
        ...args,
      ]),
    );
  let clients: MciClient[];
  try {
    const urls = await Promise.all(nodes.map((node) => node.url));
    clients = await Promise.all(urls.map((url) => connect(url)));
  } catch (error) {
    await db[Symbol.asyncDispose]();
    throw error;
  }
  return {
    db,
    nodes,
    clients,
    async [Symbol.asyncDispose]() {
      await Promise.all(clients.map((client) => client.close()));
      for (const node of nodes) if (node.child.exitCode === null) node.child.kill('SIGTERM');
      await Promise.all(
        nodes.map(async (node) => {
          const timer = setTimeout(() => {
            console.error(`a node did not stop within 15 s of SIGTERM:\n${node.stderr().slice(-4000)}`);
            node.child.kill('SIGKILL');
          }, 15_000);
          await node.exited;
          clearTimeout(timer);
        }),
      );
      await db[Symbol.asyncDispose]();
    },
  };
}

/** Every event `client` receives from now on, of every process. */
function record(client: MciClient): ServerEvent[] {
  const events: ServerEvent[] = [];
  client.subscribe({ all: true }, { onEvent: (event) => events.push(event) });
  return events;
}

/** Whether `events` hold a `process` event of `pid` in `state`. */
const saw = (events: ServerEvent[], pid: number, state: string) =>
  events.some((event) => event.type === 'process' && event.pid === pid && event.state === state);

const idleEvents = (events: ServerEvent[], pid: number) =>
  events.filter((event) => event.type === 'process' && event.pid === pid && event.state === 'idle');

/** Resolves after `ms`. */
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds (polling every 20 ms), at most `ms`. */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Each event's seq is one more than the one before: nothing lost, nothing repeated. */
function expectContiguous(events: ServerEvent[]) {
  const seqs = events.map((event) => event.seq);
  const first = seqs[0] ?? 0;
  expect(seqs).toEqual(seqs.map((_, i) => first + i));
}

describe('mci serve --cluster', { timeout: 120_000 }, () => {
  it('three nodes run 300 processes exactly once; every node sees every event in order; since resumes on another node', async () => {
    await using cluster = await startNodes(3);
    const [c1, c2, c3] = cluster.clients as [MciClient, MciClient, MciClient];
    const seen = record(c2);
    await delay(200);

    const created = await Promise.all(
      cluster.clients.flatMap((client, node) =>
        Array.from({ length: 100 }, (_, i) => client.createProcess(`output(${node * 1000 + i})`)),
      ),
    );
    const pids = created.map((snapshot) => snapshot.pid);
    expect(new Set(pids).size).toBe(300);
    await until(() => pids.every((pid) => idleEvents(seen, pid).length > 0));

    for (const [index, pid] of pids.entries()) {
      expect(idleEvents(seen, pid)).toHaveLength(1);
      const run = await c3.getRun(pid);
      expect(run).toMatchObject({
        status: 'success',
        outputs: [Math.floor(index / 100) * 1000 + (index % 100)],
      });
    }
    expect(seen.filter((event) => event.type === 'output')).toHaveLength(300);
    expectContiguous(seen);

    // A client that saw events up to some seq on node 2 resumes on node 3 with `since`.
    const cut = seen[Math.floor(seen.length / 2)]!.seq;
    const resumed: ServerEvent[] = [];
    c1.subscribe({ all: true }, { since: cut, onEvent: (event) => resumed.push(event) });
    const rest = seen.filter((event) => event.seq > cut);
    await until(() => resumed.length >= rest.length);
    expect(resumed.map((event) => [event.seq, event.type])).toEqual(
      rest.map((event) => [event.seq, event.type]),
    );
  });

  it('kills across nodes; a kill -9 of a node: its runs end interrupted, its queue runs on a survivor, nothing is lost', async () => {
    await using cluster = await startNodes(3);
    const [c1, c2, c3] = cluster.clients as [MciClient, MciClient, MciClient];
    const seen = record(c2);

    // Created and running on node 1, killed from node 3.
    const loop = await c1.createProcess('while (true) {}', { timeoutMs: 60_000 });
    await until(() => saw(seen, loop.pid, 'running'));
    await c3.signal(loop.pid, 'kill');
    expect(await c3.wait(loop.pid, { timeoutMs: 30_000 })).toMatchObject({
      state: 'idle',
      status: 'canceled',
    });

    // Node 1: two running, four queued (one of them a tight loop), then kill -9.
    const running = await Promise.all(
      [0, 1].map((i) => c1.createProcess(`await new Promise((r) => setTimeout(r, 30_000)); output(${i})`)),
    );
    await until(() => running.every(({ pid }) => saw(seen, pid, 'running')));
    const queued = await Promise.all([2, 3, 4].map((i) => c1.createProcess(`output(${i})`)));
    const spinner = await c1.createProcess('while (true) {}', { timeoutMs: 60_000 });
    await until(() => [...queued, spinner].every(({ pid }) => saw(seen, pid, 'queued')));
    cluster.nodes[0]!.child.kill('SIGKILL');
    await cluster.nodes[0]!.exited;

    for (const { pid } of running) {
      expect(await c2.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ state: 'idle', status: 'failed' });
      expect((await c2.getRun(pid)).error?.message).toBe('interrupted: node n1 stopped');
    }
    for (const [i, { pid }] of queued.entries()) {
      expect(await c3.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ state: 'idle', status: 'success' });
      expect((await c3.getRun(pid)).outputs).toEqual([i + 2]);
    }
    // Created on node 1, running on a survivor now, killed from node 3.
    await until(() => saw(seen, spinner.pid, 'running'));
    await c3.signal(spinner.pid, 'kill');
    expect(await c3.wait(spinner.pid, { timeoutMs: 30_000 })).toMatchObject({
      state: 'idle',
      status: 'canceled',
    });

    const pids = [loop, ...running, ...queued, spinner].map((p) => p.pid);
    expect(new Set(pids).size).toBe(pids.length);
    await until(() => pids.every((pid) => idleEvents(seen, pid).length > 0));
    for (const pid of pids) expect(idleEvents(seen, pid)).toHaveLength(1);
    expectContiguous(seen);
    const interrupted = cluster.nodes
      .slice(1)
      .map((node) => node.stdout() + node.stderr())
      .join('');
    expect(interrupted).toContain('node lease expired: n1 stopped without releasing it');
  });

  it('a stream whose node is killed: a survivor runs its queued blocks in order and sends its stream.result', async () => {
    await using cluster = await startNodes(2);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    const mine: ServerEvent[] = [];
    const stream = c1.openStream({ ref: 'turn-1', onEvent: (event) => mine.push(event) });
    const block = (code: string) => `\n\`\`\`ts exec=true\n${code}\n\`\`\`\n`;
    await stream.write(
      `Three steps.${block("await new Promise((r) => setTimeout(r, 30_000)); output('never')")}${block(
        'await new Promise((r) => setTimeout(r, 300)); output(2)',
      )}${block('output(3)')}`,
    );
    await stream.end();
    await until(() => mine.some((e) => e.type === 'process' && e.state === 'running'));
    const pids = mine.flatMap((e) => (e.type === 'intent' && e.pid !== undefined ? [e.pid] : []));
    expect(pids).toHaveLength(3);
    // Another node follows the stream from its first event.
    const events: ServerEvent[] = [];
    c2.subscribe({ streamId: stream.streamId }, { since: 0, onEvent: (event) => events.push(event) });
    await until(() => events.some((e) => e.type === 'process' && e.state === 'running'));
    cluster.nodes[0]!.child.kill('SIGKILL');

    await until(() => events.some((e) => e.type === 'stream.result'));
    const result = events.find((e) => e.type === 'stream.result');
    expect(result).toMatchObject({
      streamId: stream.streamId,
      ref: 'turn-1',
      processes: pids.map((pid, i) => ({ pid, status: i === 0 ? 'failed' : 'success' })),
    });
    expect(result?.type === 'stream.result' && result.text).toContain('interrupted: node n1 stopped');
    const [second, third] = [await c2.getRun(pids[1]!), await c2.getRun(pids[2]!)];
    expect([second.outputs, third.outputs]).toEqual([[2], [3]]);
    expect(Date.parse(third.startedAt!)).toBeGreaterThanOrEqual(Date.parse(second.endedAt!));
  });

  it('a node frozen past its lease is fenced: a survivor ends its run, its late writes are refused, it exits 1', async () => {
    await using cluster = await startNodes(2);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    const { pid } = await c1.createProcess("await new Promise((r) => setTimeout(r, 1500)); output('late')");
    // Node 2 sees the process once node 1's write batch is committed.
    let state: string | undefined;
    while (state !== 'running')
      state = await c2.get(pid).then(
        (p) => p.state,
        () => undefined,
      );
    const frozen = cluster.nodes[0]!;
    frozen.child.kill('SIGSTOP');
    expect(await c2.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ status: 'failed' });
    await delay(1500); // the frozen node's program ends meanwhile
    frozen.child.kill('SIGCONT');
    expect(await frozen.exited).toBe(1);
    expect(frozen.stderr()).toContain(
      'mci serve: node n1 lost its lease to another node, which took over its processes; exiting',
    );
    const run = await c2.getRun(pid);
    expect(run).toMatchObject({
      status: 'failed',
      outputs: [],
      error: { message: 'interrupted: node n1 stopped' },
    });
  });

  it('runs what one node queues on the free slots of the others; wait and kill work from the node it was created on', async () => {
    await using cluster = await startNodes(2);
    const [c1] = cluster.clients as [MciClient, MciClient];
    const sleepers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        c1.createProcess(`await new Promise((r) => setTimeout(r, 400)); output(${i})`),
      ),
    );
    const spinner = await c1.createProcess('while (true) {}', { timeoutMs: 60_000 });
    for (const [i, { pid }] of sleepers.entries()) {
      expect(await c1.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ state: 'idle', status: 'success' });
      expect((await c1.getRun(pid)).outputs).toEqual([i]);
    }
    let state = '';
    while (state !== 'running') state = (await c1.get(spinner.pid)).state;
    const metrics = await (await fetch(`${await cluster.nodes[1]!.url}/metrics`)).text();
    expect(metrics).toMatch(/^mci_cluster_processes\{node="n[12]",state="running"\} 1$/m);
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]\d*$/m);
    expect(metrics).toMatch(/^nodejs_heap_size_used_bytes [1-9]\d*$/m);
    await c1.signal(spinner.pid, 'kill');
    expect(await c1.wait(spinner.pid, { timeoutMs: 30_000 })).toMatchObject({
      state: 'idle',
      status: 'canceled',
    });

    const { rows } = await adminQueryOn(
      cluster.db.url,
      'SELECT node, count(*)::int AS n FROM processes GROUP BY node',
    );
    const ran = Object.fromEntries(rows.map((row) => [row.node, row.n]));
    expect(ran.n1 + ran.n2).toBe(13);
    expect(ran.n2).toBeGreaterThanOrEqual(2);
  });

  it('a node stopped with SIGTERM finishes its running processes and hands its queue to a live node', async () => {
    await using cluster = await startNodes(2, 10_000);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    const sleeper = (ms: number, i: number) => `await new Promise((r) => setTimeout(r, ${ms})); output(${i})`;
    // Node 2 busy (no slot to offer), node 1 with two running and four waiting.
    const busy = await Promise.all([0, 1].map((i) => c2.createProcess(sleeper(2500, i))));
    const running = await Promise.all([0, 1].map((i) => c1.createProcess(sleeper(1000, i))));
    const queued = await Promise.all([2, 3, 4, 5].map((i) => c1.createProcess(`output(${i})`)));
    await delay(300);
    cluster.nodes[0]!.child.kill('SIGTERM');
    expect(await cluster.nodes[0]!.exited).toBe(0);

    for (const [i, { pid }] of [...running, ...queued].entries()) {
      expect(await c2.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ state: 'idle', status: 'success' });
      expect((await c2.getRun(pid)).outputs).toEqual([i]);
    }
    for (const { pid } of busy)
      expect(await c2.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ status: 'success' });
    const { rows } = await adminQueryOn(
      cluster.db.url,
      `SELECT node FROM processes WHERE pid = ANY($1::bigint[])`,
      [queued.map((p) => p.pid)],
    );
    expect(rows.map((row) => row.node)).toEqual(['n2', 'n2', 'n2', 'n2']);
  });

  it('counts maxQueue over the cluster', async () => {
    await using cluster = await startNodes(2, 2000, ['--max-queue', '4']);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    // Programs that hold their slot asleep: four spinning isolates would starve the nodes of the CPU
    // their lease renewals need on a busy machine.
    const spin = (client: MciClient) =>
      client.createProcess('await new Promise((r) => setTimeout(r, 60_000));', { timeoutMs: 60_000 });
    // Every slot of both nodes busy, then three waiting on node 1.
    const pids = [await spin(c1), await spin(c1), await spin(c2), await spin(c2)].map((p) => p.pid);
    for (let i = 0; i < 3; i++) pids.push((await spin(c1)).pid);
    await delay(1000); // a lease renewal (every 400 ms) counts the others' queues
    pids.push((await spin(c2)).pid);
    await delay(1000);
    await expect(spin(c2)).rejects.toMatchObject({
      code: 'QUEUE_FULL',
      message: 'the queue is full (4 processes waiting in the cluster); retry later',
    });
    // The waiting ones first: a slot freed while processes wait would hand one over to the other node
    // in the middle of the kills (kills racing a handover are not what this test is about).
    for (const pid of [...pids].reverse()) await c1.signal(pid, 'kill');
    for (const pid of pids)
      expect(await c1.wait(pid, { timeoutMs: 10_000 })).toMatchObject({ status: 'canceled' });
  });

  it('kills that race the hand-over of a waiting process reach it, from either node', async () => {
    await using cluster = await startNodes(2);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    const sleep = (client: MciClient) =>
      client.createProcess('await new Promise((r) => setTimeout(r, 60_000));', { timeoutMs: 60_000 });
    // Both nodes' slots busy and eight waiting on node 1: each kill of a running process frees a slot
    // on its node, and node 1 hands a waiting process over to node 2 while the next kills arrive.
    const running = [await sleep(c1), await sleep(c1), await sleep(c2), await sleep(c2)].map((p) => p.pid);
    const waiting: number[] = [];
    for (let i = 0; i < 8; i++) waiting.push((await sleep(c1)).pid);
    const pids = [...running.slice(2), ...running.slice(0, 2), ...waiting];
    for (const [i, pid] of pids.entries()) await (i % 2 === 0 ? c1 : c2).signal(pid, 'kill');
    for (const pid of pids)
      expect(await c1.wait(pid, { timeoutMs: 20_000 })).toMatchObject({ state: 'idle', status: 'canceled' });
  });

  it('runs an idle process once when two nodes get its run signal at the same moment', async () => {
    await using cluster = await startNodes(2);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    const seen = record(c1);
    const pids: number[] = [];
    // Each run lasts a second, so the second signal finds it queued or running even when it arrives late.
    const program = (i: number) => `await new Promise((r) => setTimeout(r, 1000)); output(${i})`;
    for (let i = 0; i < 12; i++) pids.push((await c1.createProcess(program(i), { autorun: false })).pid);
    // Committed, so node 2 reads them too.
    for (const pid of pids)
      while (
        !(await c2.get(pid).then(
          () => true,
          () => false,
        ))
      )
        await delay(20);
    for (const pid of pids) {
      const results = await Promise.allSettled([c1.signal(pid, 'run'), c2.signal(pid, 'run')]);
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(refused, `pid ${pid}`).toHaveLength(1);
      expect(refused[0]).toMatchObject({ code: 'CONFLICT' });
    }
    for (const pid of pids)
      expect(await c2.wait(pid, { timeoutMs: 10_000 })).toMatchObject({
        state: 'idle',
        status: 'success',
        runs: 1,
      });
    await until(() =>
      pids.every((pid) => idleEvents(seen, pid).some((e) => e.type === 'process' && e.status === 'success')),
    );
    await delay(300);
    for (const pid of pids) {
      const running = seen.filter((e) => e.type === 'process' && e.pid === pid && e.state === 'running');
      expect(running, `pid ${pid}`).toHaveLength(1);
    }
  });

  it('a process created or changed over HTTP on one node is seen at once on another', async () => {
    await using cluster = await startNodes(2);
    const [url1, url2] = await Promise.all(cluster.nodes.map((node) => node.url));
    const call = async (url: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    for (let i = 0; i < 20; i++) {
      const created = await call(url1!, 'POST', '/processes', { code: 'while (true) {}', timeoutMs: 60_000 });
      expect(created.status).toBe(201);
      const pid = created.body.pid as number;
      expect((await call(url2!, 'GET', `/processes/${pid}`)).status, `pid ${pid}`).toBe(200);
      expect((await call(url2!, 'POST', `/processes/${pid}/signals/kill`, {})).status, `pid ${pid}`).toBe(
        200,
      );
      const idle = await call(url2!, 'POST', '/processes', { code: 'output(1)', autorun: false });
      const other = idle.body.pid as number;
      expect((await call(url1!, 'POST', `/processes/${other}/signals/run`, {})).status).toBe(200);
      await cluster.clients[0]!.wait(other, { timeoutMs: 10_000 });
      expect((await call(url2!, 'DELETE', `/processes/${other}`)).status).toBe(200);
      expect((await call(url1!, 'GET', `/processes/${other}`)).status).toBe(404);
    }
  });

  it('loses nothing when every database connection is terminated mid-run', async () => {
    // Leases long enough that a node reconnecting under load is not taken for dead.
    await using cluster = await startNodes(2, 10_000);
    const [c1, c2] = cluster.clients as [MciClient, MciClient];
    const seen = record(c2);
    await delay(200);

    const trace: string[] = [];
    const step = (what: string) => trace.push(`${new Date().toISOString()} ${what}`);
    onTestFailed(() => {
      console.error(trace.join('\n'));
      for (const node of cluster.nodes) console.error(node.stderr().slice(-4000), node.stdout().slice(-4000));
    });
    const create = (count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          (i % 2 ? c1 : c2).createProcess('await new Promise((r) => setTimeout(r, 20)); output(1)'),
        ),
      );
    step('creating');
    const first = await create(60);
    step('terminating');
    await adminQuery(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [cluster.db.name],
    );
    step('creating again');
    const second = await create(60);
    const pids = [...first, ...second].map((p) => p.pid);
    step('waiting');
    await until(() => pids.every((pid) => idleEvents(seen, pid).length > 0), 60_000);
    step('checking');
    for (const pid of pids) {
      expect(idleEvents(seen, pid)).toHaveLength(1);
      expect(await c1.getRun(pid)).toMatchObject({ status: 'success', outputs: [1] });
    }
    expectContiguous(seen);
  });
});
