import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { greetToolDir } from './support/greet-tools.ts';
import { openJsonSocket } from './support/json-socket.ts';
import { type Json, serveProcesses } from './support/serve-process.ts';
import { until } from './support/until.ts';

// `mci serve` on a database file, killed with SIGKILL in the middle of its work and started again on
// the same file: every record is there, queued processes run again in their order, interrupted runs
// end failed with their partial outputs, pids and seqs continue, and a client that reconnects with
// `since` gets exactly what it missed.

const { dir, file: tools } = greetToolDir('mci-crash-', 'Hello!');

const { serve: serveArgs } = serveProcesses(dir);
/** Starts `mci serve ARGS`; `url` resolves with its URL (from the banner), `exited` with its exit code. */
const serve = (...args: string[]) => serveArgs(args);

async function http(url: string, method: string, path: string, body?: unknown): Promise<Json> {
  const response = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : { text };
}

/** A WebSocket client subscribed to everything since `since`, collecting server events. */
async function follow(url: string, since: number) {
  const socket = await openJsonSocket(`${url.replace('http', 'ws')}/ws`);
  await socket.request({ type: 'subscribe', all: true, since });
  const isEvent = (m: Json) => typeof m.seq === 'number' && m.type !== 'hello' && m.type !== 'reply';
  return {
    get events() {
      return socket.messages.filter(isEvent);
    },
    waitFor: (predicate: (event: Json) => boolean) => socket.waitFor((m) => isEvent(m) && predicate(m)),
    close: () => socket.socket.terminate(),
  };
}

const isIdle = (pid: number, run: number) => (e: Json) =>
  e.type === 'process' && e.pid === pid && e.run === run && e.state === 'idle';

describe('mci serve on a database file', () => {
  it('survives kill -9: records, queue order, interrupted runs, outputs, pids, seqs, since', {
    timeout: 180_000,
  }, async () => {
    const db = join(dir, 'crash', 'mci.db');
    const args = ['--file', tools, '--db', db, '--concurrency', '1'];
    const first = serve(...args);
    const url = await first.url;
    const watcher = await follow(url, 0);

    const finished = await http(url, 'POST', '/processes', {
      code: 'output(1); console.log("hello"); output({ a: [2, "three"] })',
      ref: 'chat-1',
      block: true,
    });
    expect(finished).toMatchObject({ state: 'idle', status: 'success' });
    const p1 = finished.pid as number;
    const { pid: p2 } = await http(url, 'POST', '/processes', {
      code: 'output("started"); console.error("partial"); while (true) {}',
      timeout: 120_000,
    });
    await watcher.waitFor((e) => e.type === 'log' && e.pid === p2);
    const { pid: p3 } = await http(url, 'POST', '/processes', { code: 'output("q3")' });
    const { pid: p4 } = await http(url, 'POST', '/processes', { code: 'output("q4")', ref: 'chat-1' });
    const { pid: p5 } = await http(url, 'POST', '/processes', {
      code: 'output("never run")',
      autorun: false,
    });
    await http(url, 'POST', `/processes/${p1}/signals/run`, {}); // run 2 of p1, queued after p4
    const before = (await http(url, 'GET', '/processes')).processes as Json[];
    expect(before.map((p) => [p.pid, p.state, p.status, p.run])).toEqual([
      [p5, 'idle', null, 0],
      [p4, 'queued', null, 1],
      [p3, 'queued', null, 1],
      [p2, 'running', null, 1],
      [p1, 'queued', null, 2],
    ]);
    await watcher.waitFor((e) => e.type === 'process' && e.pid === p1 && e.run === 2 && e.state === 'queued');
    const seen = [...watcher.events];
    const lastSeen = seen.at(-1)!.seq as number;
    watcher.close();

    first.child.kill('SIGKILL');
    expect(await first.exited).toBe(null);

    const second = serve(...args);
    const url2 = await second.url;
    const resumed = await follow(url2, lastSeen);
    const everything = await follow(url2, 0);
    // The queue runs again in its original order, one at a time: p3, p4, then p1's second run.
    await resumed.waitFor(isIdle(p1, 2));
    const starts = resumed.events
      .filter((e) => e.type === 'process' && e.state === 'running')
      .map((e) => e.pid);
    expect(starts).toEqual([p3, p4, p1]);

    // The interrupted run ended failed, its partial output and log kept.
    expect(await http(url2, 'GET', `/processes/${p2}`)).toMatchObject({
      state: 'idle',
      status: 'failed',
      run: 1,
      error: { message: 'interrupted: the server stopped during this run' },
    });
    expect(await http(url2, 'GET', `/processes/${p2}/runs/1`)).toMatchObject({
      status: 'failed',
      outputs: ['started'],
      stdout: '',
      stderr: 'partial\n',
    });
    // The finished run is intact; the others ran and finished after the restart.
    expect(await http(url2, 'GET', `/processes/${p1}/runs/1`)).toMatchObject({
      status: 'success',
      outputs: [1, { a: [2, 'three'] }],
      stdout: 'hello\n',
    });
    expect(await http(url2, 'GET', `/processes/${p1}/output`)).toMatchObject({
      outputs: [1, { a: [2, 'three'] }],
    });
    expect(await http(url2, 'GET', `/processes/${p4}`)).toMatchObject({ status: 'success', ref: 'chat-1' });
    expect(await http(url2, 'GET', `/processes/${p4}/output`)).toMatchObject({ output: 'q4' });
    expect(await http(url2, 'GET', `/processes/${p5}`)).toMatchObject({
      state: 'idle',
      status: null,
      run: 0,
    });

    // Reconnecting with `since` got exactly the events after it: those a fresh subscriber replays past
    // that seq, no more, no less, in order. And the history before it is what was seen live.
    await everything.waitFor(isIdle(p1, 2));
    const replayedAfter = everything.events.filter((e) => e.seq > lastSeen);
    expect(resumed.events.map((e) => e.seq)).toEqual(replayedAfter.map((e) => e.seq));
    expect(resumed.events).toEqual(replayedAfter);
    expect(resumed.events[0]).toMatchObject({ type: 'process', pid: p2, status: 'failed' });
    expect(everything.events.filter((e) => e.seq <= lastSeen)).toEqual(seen);

    // pids continue; the interrupted process runs again (run 2), and can be killed as usual.
    const { pid: p6 } = await http(url2, 'POST', '/processes', { code: 'output(6)', block: true });
    expect(p6).toBeGreaterThan(p5);
    expect(await http(url2, 'POST', `/processes/${p2}/signals/run`, {})).toMatchObject({ pid: p2 });
    await until(
      `process ${p2} running its second run`,
      () => http(url2, 'GET', `/processes/${p2}`),
      (p) => p.state === 'running' && p.run === 2,
    );
    await http(url2, 'POST', `/processes/${p2}/signals/kill`, {});
    await until(
      `process ${p2} canceled`,
      () => http(url2, 'GET', `/processes/${p2}`),
      (p) => p.status === 'canceled',
    );

    // A second server cannot use the same database at the same time.
    const rival = serve(...args);
    expect(await rival.exited).toBe(1);
    expect(rival.stderr()).toMatch(/mci serve: the process database .*mci\.db is in use by another process/);

    // After a clean stop, pids continue exactly.
    resumed.close();
    everything.close();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const third = serve(...args);
    const url3 = await third.url;
    expect((await http(url3, 'POST', '/processes', { code: 'output(7)', block: true })).pid).toBe(p6 + 1);
    expect((await http(url3, 'GET', '/processes')).processes).toHaveLength(7);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  });

  it('refuses to start on a corrupt database or a path it cannot write, saying why', {
    timeout: 60_000,
  }, async () => {
    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, 'this is not an SQLite database\n'.repeat(64));
    const onCorrupt = serve('--file', tools, '--db', corrupt);
    expect(await onCorrupt.exited).toBe(1);
    expect(onCorrupt.stderr()).toContain(
      `mci serve: the process database ${corrupt} is corrupt or not an SQLite database (file is not a database)`,
    );

    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'x');
    const unwritable = serve('--file', tools, '--db', join(blocker, 'mci.db'));
    expect(await unwritable.exited).toBe(1);
    expect(unwritable.stderr()).toContain(
      `mci serve: cannot create the directory ${blocker} of the process database`,
    );
  });
});
