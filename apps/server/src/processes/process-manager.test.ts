import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatResults, type ServerEvent } from '@mci/protocol';
import { createSandboxPool, type ExecutionRequest, type SandboxPool } from '@mci/sandbox';
import { createToolRunner, loadTools, type ToolRunner } from '@mci/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProcessManager } from './process-manager.ts';
import type { Principal, ProcessManager, ProcessManagerOptions } from './process-manager-types.ts';
import type { EventRoute } from './process-store.ts';
import { ServerError } from './server-error.ts';

// The process manager over the real sandbox pool (isolated-vm worker processes) and real tools.

const alice: Principal = { id: 'alice', role: 'client' };
const bob: Principal = { id: 'bob', role: 'client' };

let dir: string;
let tools: ToolRunner;
const pools: SandboxPool[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mci-pm-'));
  // A slow cli tool that records its pid, so the test can see it is killed with the run.
  writeFileSync(
    join(dir, 'mci.yaml'),
    [
      "schemaVersion: '1.0'",
      'tools:',
      '  - name: slow',
      '    execution:',
      '      type: cli',
      '      command: sh',
      `      args: ['-c', 'echo $$ > ${join(dir, 'slow.pid')}; exec sleep 60']`,
      '  - name: echo',
      '    execution: { type: text, text: "echo {{props.word}}" }',
      '',
    ].join('\n'),
  );
  tools = createToolRunner(await loadTools(join(dir, 'mci.yaml')));
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
  await tools?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function setup(size: number, options: Partial<ProcessManagerOptions> = {}) {
  const pool = createSandboxPool({ size });
  pools.push(pool);
  const manager = await createProcessManager({ pool, tools, ...options });
  const events: Array<{ event: ServerEvent; route: EventRoute }> = [];
  manager.onEvent((event, route) => events.push({ event, route }));
  return { manager, events };
}

/** Resolves with the first event matching `predicate` (already seen or future). */
function nextEvent(
  manager: ProcessManager,
  seen: Array<{ event: ServerEvent }>,
  predicate: (event: ServerEvent) => boolean,
): Promise<ServerEvent> {
  const found = seen.find(({ event }) => predicate(event));
  if (found) return Promise.resolve(found.event);
  return new Promise((resolve) => {
    const off = manager.onEvent((event) => {
      if (!predicate(event)) return;
      off();
      resolve(event);
    });
  });
}

describe('process manager over the real sandbox', () => {
  let shared: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    shared = await setup(2);
  });

  it('goes queued -> running -> idle/success with outputs, logs and the return value', async () => {
    const { manager, events } = shared;
    const { pid } = await manager.create(
      { code: 'console.log("hi");\noutput(1 + 1);\nreturn { done: true };' },
      alice,
    );
    const done = await manager.wait(pid, alice);
    expect(done).toMatchObject({ state: 'idle', status: 'success', run: 1 });
    expect(await manager.getResult(pid, alice)).toMatchObject({
      outputs: [2, { done: true }],
      stdout: 'hi\n',
      stderr: '',
    });
    const mine = events.filter(({ route }) => route.pid === pid).map(({ event }) => event);
    expect(mine.map((e) => (e.type === 'process' ? e.state : e.type))).toEqual([
      'queued',
      'running',
      'log',
      'output',
      'output',
      'idle',
    ]);
    const seqs = mine.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("runs each principal's processes in its own isolate: the trust domain of a run is its owner", async () => {
    const real = createSandboxPool({ size: 1, isolation: 'context' });
    pools.push(real);
    const isolates: Array<[string | undefined, string | undefined]> = [];
    const pool = {
      size: real.size,
      execute: (request: ExecutionRequest) => {
        const execution = real.execute(request);
        void execution.result.then((result) => isolates.push([request.trustDomain, result.isolate?.id]));
        return execution;
      },
    };
    const manager = await createProcessManager({ pool, tools });
    for (const principal of [alice, alice, bob, alice]) {
      const { pid } = await manager.create({ code: 'output(1)' }, principal);
      await manager.wait(pid, principal);
    }
    await expect.poll(() => isolates.length).toBe(4);
    expect(isolates.map(([domain]) => domain)).toEqual(['alice', 'alice', 'bob', 'alice']);
    const [a1, a2, b, a3] = isolates.map(([, id]) => id);
    expect(new Set([a1, a2, a3]).size).toBe(1);
    expect(b).not.toBe(a1);
  });

  it('fails with the error and its line, times out, and runs again after each outcome', async () => {
    const { manager } = shared;
    const failing = (await manager.create({ code: 'const a = 1;\nnull.boom();' }, alice)).pid;
    const sleeping = (await manager.create({ code: 'await new Promise(() => {});', timeoutMs: 300 }, alice))
      .pid;
    const fine = (await manager.create({ code: 'output("ok")' }, alice)).pid;
    expect(await manager.wait(failing, alice)).toMatchObject({
      status: 'failed',
      error: { name: 'TypeError', line: 2 },
    });
    expect(await manager.wait(sleeping, alice)).toMatchObject({ status: 'timeout', timeoutMs: 300 });
    expect(await manager.wait(fine, alice)).toMatchObject({ status: 'success' });
    for (const pid of [failing, sleeping, fine]) {
      expect(await manager.signal(pid, 'run', alice, { force: true })).toMatchObject({ run: 2, runs: 2 });
    }
    expect(await manager.wait(failing, alice)).toMatchObject({ status: 'failed', run: 2 });
    expect(await manager.wait(sleeping, alice)).toMatchObject({ status: 'timeout', run: 2 });
    expect(await manager.wait(fine, alice)).toMatchObject({ status: 'success', run: 2 });
    expect((await manager.getRun(fine, 1, alice)).outputs).toEqual(['ok']);
    expect((await manager.getRun(fine, 2, alice)).outputs).toEqual(['ok']);
    expect((await manager.getRun(failing, 1, alice)).error?.message).toMatch(/null/);
  });

  it('kills a tight loop: terminating, then idle/canceled; then it can run again', async () => {
    const { manager, events } = shared;
    const { pid } = await manager.create({ code: 'output("start");\nwhile (true) {}' }, alice);
    await nextEvent(manager, events, (e) => e.type === 'output' && e.pid === pid);
    expect((await manager.signal(pid, 'kill', alice)).state).toBe('terminating');
    // `canceled`: the kill ended it, not the 30 s timeout (the bench measures the latency).
    expect(await manager.wait(pid, alice)).toMatchObject({ state: 'idle', status: 'canceled' });
    await expect(manager.signal(pid, 'kill', alice)).rejects.toThrow(ServerError);
    await manager.signal(pid, 'run', alice);
    await nextEvent(manager, events, (e) => e.type === 'output' && e.pid === pid && e.run === 2);
    await manager.signal(pid, 'kill', alice);
    expect(await manager.wait(pid, alice)).toMatchObject({ status: 'canceled', run: 2 });
    expect((await manager.getRun(pid, 1, alice)).outputs).toEqual(['start']);
  });

  it('kills a run awaiting a slow cli tool, and the tool process with it', async () => {
    const { manager, events } = shared;
    const pidFile = join(dir, 'slow.pid');
    rmSync(pidFile, { force: true });
    const { pid } = await manager.create(
      { code: 'console.log("calling");\nawait tools.slow({});\noutput("never")' },
      alice,
    );
    await nextEvent(manager, events, (e) => e.type === 'log' && e.pid === pid);
    // The program has called the tool; wait until the command has really started.
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const toolPid = Number(readFileSync(pidFile, 'utf8').trim());
    await manager.signal(pid, 'kill', alice);
    expect(await manager.wait(pid, alice)).toMatchObject({ status: 'canceled' });
    expect((await manager.getResult(pid, alice)).outputs).toEqual([]);
    // The whole process group is killed; allow the OS a moment to reap it.
    const alive = () => {
      try {
        process.kill(toolPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive()).toBe(false);
  });

  it('calls tools and reports tool events', async () => {
    const { manager, events } = shared;
    const { pid } = await manager.create(
      { code: 'const r = await tools.echo({ word: "hey" });\noutput(r.content[0].text)' },
      alice,
    );
    expect(await manager.wait(pid, alice)).toMatchObject({ status: 'success' });
    expect((await manager.getResult(pid, alice)).outputs).toEqual(['echo hey']);
    const tool = events.find(({ event }) => event.type === 'tool' && event.pid === pid)?.event;
    expect(tool).toMatchObject({ type: 'tool', name: 'echo', isError: false });
  });

  it('replays exactly what a client missed since a seq', async () => {
    const { manager } = shared;
    const before = manager.lastSeq();
    const { pid } = await manager.create(
      { code: 'for (let i = 0; i < 5; i++) output(i)', ref: 'replay' },
      bob,
    );
    await manager.wait(pid, bob);
    const missed = await manager.replay(before, { ref: 'replay' }, bob);
    expect(missed.map((e) => e.type)).toEqual([
      'process',
      'process',
      'output',
      'output',
      'output',
      'output',
      'output',
      'process',
    ]);
    const middle = missed[3]!.seq;
    expect(await manager.replay(middle, { pid }, bob)).toEqual(missed.slice(4));
    expect(
      (await manager.replay(before, { all: true }, alice)).filter((e) => 'pid' in e && e.pid === pid),
    ).toEqual([]);
  });
});

describe('scheduling over the real sandbox', () => {
  it('kills a queued process at once, and is fair across principals', async () => {
    const { manager, events } = await setup(1);
    const blocker = (await manager.create({ code: 'output(0);\nwhile (true) {}' }, alice)).pid;
    const queued: number[] = [];
    for (const i of [1, 2, 3]) queued.push((await manager.create({ code: `output(${i})` }, alice)).pid);
    const bobs = (await manager.create({ code: 'output("bob")' }, bob)).pid;
    await nextEvent(manager, events, (e) => e.type === 'output' && e.pid === blocker);
    expect(await manager.signal(queued[0]!, 'kill', alice)).toMatchObject({
      state: 'idle',
      status: 'canceled',
    });
    await manager.signal(blocker, 'kill', alice);
    for (const pid of [...queued, bobs]) await manager.wait(pid, pid === bobs ? bob : alice);
    const startOrder = events
      .filter(({ event }) => event.type === 'process' && event.state === 'running')
      .map(({ event }) => (event as { pid: number }).pid);
    // bob's single process runs before alice's backlog, not after it
    expect(startOrder).toEqual([blocker, queued[1], bobs, queued[2]]);
    expect((await manager.get(queued[0]!, alice)).startedAt).toBeUndefined();
    await manager.shutdown({ graceMs: 1000 });
  });

  it('runs a stream: intents -> processes in order -> stream.result with the response pipe', async () => {
    const { manager, events } = await setup(2);
    const stream = manager.openStream({ streamId: 'chat-1', ref: 'message-1' }, alice);
    const text = [
      'First I set things up.\n\n```ts exec=true\nconsole.log("one");\noutput({ step: 1 });\n```\n',
      'Then Python, which cannot run:\n```python exec\nprint(2)\n```\n',
      'Then the second step:\n```js exec timeout=15000\nconst r = await tools.echo({ word: "two" });\noutput(r.content[0].text);\n```\n',
      'And a broken one:\n```ts exec\nconst x: number = 1;\nthrow new Error("nope " + x);\n```\nDone.',
    ].join('');
    for (let i = 0; i < text.length; i += 7) stream.push(text.slice(i, i + 7));
    stream.end();
    const result = await stream.result;
    expect(result.processes.map((p) => [p.metadata?.intentIndex, p.status])).toEqual([
      [0, 'success'],
      [2, 'success'],
      [3, 'failed'],
    ]);
    expect(result.processes[1]!.timeoutMs).toBe(15000);
    // one after another: each block ends before the next starts
    const transitions = events
      .filter(({ event, route }) => event.type === 'process' && route.streamId === 'chat-1')
      .map(({ event }) => event as { pid: number; state: string })
      .filter((e) => e.state === 'running' || e.state === 'idle')
      .map((e) => `${e.pid}:${e.state}`);
    const [a, b, c] = result.processes.map((p) => p.pid);
    expect(transitions).toEqual([
      `${a}:running`,
      `${a}:idle`,
      `${b}:running`,
      `${b}:idle`,
      `${c}:running`,
      `${c}:idle`,
    ]);
    expect(result.text).toBe(
      formatResults(await Promise.all(result.processes.map((p) => manager.getResult(p.pid, alice))), {
        rejected: [
          {
            index: 1,
            lang: 'python',
            reason: 'language "python" is not supported (use ts, typescript, js, javascript)',
          },
        ],
      }),
    );
    expect(result.text).toContain('block 0 (pid');
    expect(result.text).toContain('output: {"step":1}\nstdout:\n| one');
    expect(result.text).toContain('output: "echo two"');
    expect(result.text).toMatch(/block 3 \(pid \d+\): failed\nerror \(line 2, column \d+\): Error: nope 1/);
    // The error is said once: the failure text the sandbox appends to stderr is not repeated.
    expect(result.text.match(/nope 1/g)).toHaveLength(1);
    const final = events.at(-1)!;
    expect(final.event).toMatchObject({
      type: 'stream.result',
      streamId: 'chat-1',
      ref: 'message-1',
      text: result.text,
    });
    await manager.shutdown();
  });

  it('shuts down: refuses work, lets running processes finish, cancels the queue', async () => {
    const { manager } = await setup(1);
    const running = (
      await manager.create(
        { code: 'await new Promise((r) => setTimeout(r, 300));\noutput("finished")' },
        alice,
      )
    ).pid;
    const waiting = (await manager.create({ code: 'output("never")' }, alice)).pid;
    expect((await manager.get(running, alice)).state).toBe('running');
    await manager.shutdown({ graceMs: 20_000 });
    expect(await manager.get(running, alice)).toMatchObject({ status: 'success' });
    expect((await manager.getResult(running, alice)).outputs).toEqual(['finished']);
    expect(await manager.get(waiting, alice)).toMatchObject({ status: 'canceled' });
    await expect(manager.create({ code: '1' }, alice)).rejects.toThrow(/shutting down/);
  });
});
