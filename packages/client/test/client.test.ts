import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClientError, connect, formatResults, type MciClient, type ServerEvent } from '../src/index.ts';
import { type ServerProcess, startServerProcess } from '@mci/test-support';

// Every client method against a real `mci serve` (spawned, port 0).

let server: ServerProcess;
let client: MciClient;

beforeAll(async () => {
  server = await startServerProcess();
  client = await connect(server.url);
});

afterAll(async () => {
  await client?.close();
  await server?.[Symbol.asyncDispose]();
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** client.wait with a deadline below the test's, so a hang reports the process as the server sees it. */
async function settle(pid: number) {
  try {
    return await client.wait(pid, { timeoutMs: 15_000 });
  } catch (error) {
    throw new Error(`process ${pid} did not settle: ${JSON.stringify(await client.get(pid))}`, {
      cause: error,
    });
  }
}

const seqs = (events: ServerEvent[]) => events.map((event) => event.seq);

describe('connect', () => {
  test('says who the server takes the client for, and its limits; accepts ws:// and http:// URLs', async () => {
    expect(client.principal).toEqual({ id: 'local', role: 'operator' });
    expect(client.limits.maxCodeBytes).toBeGreaterThan(0);
    expect(client.url).toBe(`ws://127.0.0.1:${server.port}/ws`);
    expect(client.httpUrl).toBe(`http://127.0.0.1:${server.port}`);
    expect(client.state).toBe('open');
    await using other = await connect(`ws://127.0.0.1:${server.port}/ws`);
    expect(other.principal.role).toBe('operator');
  });

  test('an unreachable server is CONNECT_FAILED', async () => {
    const error = await connect('ws://127.0.0.1:1/ws').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).code).toBe('CONNECT_FAILED');
    expect((error as ClientError).message).toContain('127.0.0.1:1');
  });
});

describe('processes', () => {
  test('createProcess, wait, get, getRun, getResult, getCode', async () => {
    const code = 'console.log("hello"); output({ sum: 1 + 1 }); output("done");';
    const created = await client.createProcess(code, { ref: 'methods' });
    expect(created).toMatchObject({ pid: expect.any(Number), ref: 'methods', run: 1 });
    expect(['queued', 'running']).toContain(created.state);

    const final = await client.wait(created.pid);
    expect(final).toMatchObject({ pid: created.pid, state: 'idle', status: 'success', run: 1 });
    expect(await client.get(created.pid)).toMatchObject({ state: 'idle', status: 'success' });

    const run = await client.getRun(created.pid);
    expect(run).toMatchObject({
      run: 1,
      status: 'success',
      outputs: [{ sum: 2 }, 'done'],
      stdout: 'hello\n',
    });
    expect(await client.getCode(created.pid)).toBe(code);

    const result = await client.getResult(created.pid);
    expect(result.outputs).toEqual([{ sum: 2 }, 'done']);
    const text = formatResults([result]);
    expect(text).toContain('success');
    expect(text).toContain('{"sum":2}');

    // Waiting on a finished process resolves at once with the same snapshot.
    expect(await client.wait(created.pid)).toEqual(await client.get(created.pid));
  });

  test('events(pid) yields the whole run in seq order and ends when it finishes; again from history', async () => {
    const { pid } = await client.createProcess(
      'for (let i = 0; i < 3; i++) { output(i); console.error("e" + i); }',
    );
    const live = await collect(client.events(pid));
    expect(live.map((event) => event.type)).toEqual([
      'process', // queued
      'process', // running
      'output',
      'log',
      'output',
      'log',
      'output',
      'log',
      'process', // idle
    ]);
    expect(live.at(-1)).toMatchObject({ type: 'process', state: 'idle', status: 'success' });
    expect(seqs(live)).toEqual([...seqs(live)].sort((a, b) => a - b));
    expect(new Set(seqs(live)).size).toBe(live.length);
    // Replayed from the server's history: the very same events.
    expect(await collect(client.events(pid))).toEqual(live);
    // From a seq on: only what follows it.
    const third = live[2] as ServerEvent;
    expect(await collect(client.events(pid, { since: third.seq }))).toEqual(live.slice(3));
  });

  test('signal: kill a running process, run it again, kill an idle one (CONFLICT); earlier runs stay readable', async () => {
    const { pid } = await client.createProcess('while (true) {}', { timeoutMs: 60_000 });
    for await (const event of client.subscribe(pid, { since: 0 })) {
      if (event.type === 'process' && event.state === 'running') break;
    }
    const killing = await client.signal(pid, 'kill');
    expect(['terminating', 'idle']).toContain(killing.state);
    expect(await settle(pid)).toMatchObject({ state: 'idle', status: 'canceled', run: 1 });

    const idleKill = await client.signal(pid, 'kill').catch((error: unknown) => error);
    expect(idleKill).toBeInstanceOf(ClientError);
    expect(idleKill).toMatchObject({ code: 'CONFLICT' });

    const rerun = await client.signal(pid, 'run', { force: true });
    expect(rerun).toMatchObject({ run: 2, runs: 2 });
    expect(['queued', 'running']).toContain(rerun.state);
    await client.signal(pid, 'kill');
    expect(await settle(pid)).toMatchObject({ status: 'canceled', run: 2 });
    expect(await client.getRun(pid, 1)).toMatchObject({ run: 1, status: 'canceled' });
    expect(await client.getRun(pid, 2)).toMatchObject({ run: 2, status: 'canceled' });
  });

  test('autorun: false waits for a run signal; wait() resolves after that first run', async () => {
    const created = await client.createProcess('output(7)', { autorun: false });
    expect(created).toMatchObject({ state: 'idle', status: null, run: 0 });
    const waiting = client.wait(created.pid);
    await client.signal(created.pid, 'run');
    expect(await waiting).toMatchObject({ status: 'success', run: 1 });
    expect((await client.getResult(created.pid)).outputs).toEqual([7]);
  });

  test('list: newest first, filtered by ref, state and status', async () => {
    const ref = `list-${Date.now()}`;
    const a = await client.createProcess('output(1)', { ref });
    const b = await client.createProcess('throw new Error("boom")', { ref });
    await settle(a.pid);
    await settle(b.pid);
    const listed = await client.list({ ref });
    expect(listed.map((process) => process.pid)).toEqual([b.pid, a.pid]);
    expect((await client.list({ ref, status: 'failed' })).map((process) => process.pid)).toEqual([b.pid]);
    expect((await client.list({ ref, state: 'running' })).length).toBe(0);
    expect((await client.get(b.pid)).error?.message).toContain('boom');
  });

  test('listProcesses pages with limit and cursor; processes() and list() read every page once', async () => {
    const ref = `pages-${Date.now()}`;
    const pids: number[] = [];
    for (let i = 0; i < 7; i++)
      pids.push((await client.createProcess(`output(${i})`, { ref, autorun: false })).pid);
    const newestFirst = [...pids].reverse();
    const first = await client.listProcesses({ ref, limit: 3 });
    expect(first.items.map((process) => process.pid)).toEqual(newestFirst.slice(0, 3));
    const second = await client.listProcesses({ ref, limit: 3, cursor: first.nextCursor! });
    expect(second.items.map((process) => process.pid)).toEqual(newestFirst.slice(3, 6));
    const last = await client.listProcesses({ ref, limit: 3, cursor: second.nextCursor! });
    expect(last).toEqual({ items: [expect.objectContaining({ pid: pids[0] })] });
    const iterated: number[] = [];
    for await (const process of client.processes({ ref }, 2)) iterated.push(process.pid);
    expect(iterated).toEqual(newestFirst);
    expect((await client.list({ ref })).map((process) => process.pid)).toEqual(newestFirst);
    await expect(client.listProcesses({ limit: 101 })).rejects.toMatchObject({
      code: 'VALIDATION',
      path: 'limit',
    });
    await expect(client.listProcesses({ cursor: 'forged' })).rejects.toMatchObject({
      code: 'VALIDATION',
      path: 'cursor',
    });
  });

  test('server errors are ClientErrors with the wire code and the bad field', async () => {
    const missing = await client.get(999_999).catch((error: unknown) => error);
    expect(missing).toMatchObject({ name: 'ClientError', code: 'NOT_FOUND' });
    const invalid = await client
      .createProcess('output(1)', { timeoutMs: -5 })
      .catch((error: unknown) => error);
    expect(invalid).toMatchObject({ code: 'VALIDATION', path: 'timeoutMs' });
    const waitMissing = await client.wait(999_999).catch((error: unknown) => error);
    expect(waitMissing).toMatchObject({ code: 'NOT_FOUND' });
    // The connection is still fine.
    expect((await client.createProcess('output(2)')).pid).toBeGreaterThan(0);
  });

  test('wait with timeoutMs gives up with TIMEOUT; with an aborted signal, with its reason', async () => {
    const { pid } = await client.createProcess('while (true) {}', { timeoutMs: 60_000 });
    await expect(client.wait(pid, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    const controller = new AbortController();
    const waiting = client.wait(pid, { signal: controller.signal });
    controller.abort(new Error('stop waiting'));
    await expect(waiting).rejects.toThrow('stop waiting');
    await client.signal(pid, 'kill');
    expect(await settle(pid)).toMatchObject({ status: 'canceled' });
  });
});

describe('subscriptions', () => {
  test('subscribe(ref) with a callback sees every event of the processes with that ref, once', async () => {
    const ref = `sub-${Date.now()}`;
    const seen: ServerEvent[] = [];
    const subscription = client.subscribe({ ref }, { onEvent: (event) => seen.push(event) });
    await subscription.ready;
    const a = await client.createProcess('output("a")', { ref });
    const b = await client.createProcess('output("b")', { ref });
    const other = await client.createProcess('output("not mine")', { ref: `${ref}-other` });
    await Promise.all([client.wait(a.pid), client.wait(b.pid), client.wait(other.pid)]);
    await client.get(a.pid); // replies come after the events sent before them
    subscription.close();
    const outputs = seen
      .filter((event) => event.type === 'output')
      .map((event) => (event as { value: unknown }).value);
    expect(outputs.sort()).toEqual(['a', 'b']);
    expect(new Set(seqs(seen)).size).toBe(seen.length);
    expect(seqs(seen)).toEqual([...seqs(seen)].sort((x, y) => x - y));
    expect(() => subscription[Symbol.asyncIterator]()).toThrow(TypeError);
  });

  test('subscribe({ all: true }) as an iterator; leaving the loop stops it', async () => {
    const subscription = client.subscribe({ all: true });
    await subscription.ready;
    const { pid } = await client.createProcess('output("everything")');
    const got: ServerEvent[] = [];
    for await (const event of subscription) {
      got.push(event);
      if (event.type === 'process' && event.pid === pid && event.state === 'idle') break;
    }
    expect(got.some((event) => event.type === 'output' && event.pid === pid)).toBe(true);
    expect(subscription.lastSeq).toBe(got.at(-1)?.seq);
  });

  test('subscribing to a pid the server does not know fails the subscription', async () => {
    const subscription = client.subscribe(999_998, { since: 0 });
    await expect(subscription.ready).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(collect(subscription)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('streams', () => {
  const turn = [
    'Let me add the numbers.\n\n',
    '```ts exec=true\nconst total = [1, 2, 3].reduce((a, b) => a + b, 0);\nconsole.log("total", total);\noutput(total);\n```\n\n',
    'And in Python, which is not run:\n\n```python exec=true\nprint(1)\n```\n\n',
    'Then a failure:\n\n```js exec=true\nthrow new Error("on purpose");\n```\n',
  ].join('');

  test('openStream: chunks in, intents and processes out, result with the response pipe', async () => {
    const stream = client.openStream({ ref: 'turn-1' });
    const iterated = collect(stream);
    // Token-sized pieces, cut anywhere (even inside the fence line).
    for (let at = 0; at < turn.length; at += 7) void stream.write(turn.slice(at, at + 7));
    await stream.end();
    const result = await stream.result;
    const events = await iterated;

    expect(result.streamId).toBe(stream.streamId);
    expect(result.ref).toBe('turn-1');
    expect(result.processes.map((process) => process.status)).toEqual(['success', 'failed']);
    const intents = events.filter((event) => event.type === 'intent');
    expect(intents.map((intent) => [intent.index, intent.lang, intent.rejected !== undefined])).toEqual([
      [0, 'ts', false],
      [1, 'python', true],
      [2, 'js', false],
    ]);
    expect(events.at(-1)?.type).toBe('stream.result');
    expect(events.some((event) => event.type === 'output' && event.value === 6)).toBe(true);
    expect(new Set(seqs(events)).size).toBe(events.length);

    // The response pipe, rebuilt on the client side from stored results, is the server's text.
    const results = await Promise.all(result.processes.map((process) => client.getResult(process.pid)));
    const rejected = intents
      .filter((intent) => intent.rejected !== undefined)
      .map((intent) => ({ index: intent.index, lang: intent.lang, reason: intent.rejected as string }));
    expect(formatResults(results, { rejected })).toBe(result.text);
    expect(result.text).toContain('on purpose');
  });

  test('a stream id in use is CONFLICT: result and end reject with it', async () => {
    const first = client.openStream({ streamId: 'dup-stream' });
    const second = client.openStream({ streamId: 'dup-stream', onEvent: () => {} });
    await expect(second.result).rejects.toMatchObject({ code: 'CONFLICT' });
    await first.end();
    expect((await first.result).processes).toEqual([]);
  });
});

describe('close', () => {
  test('ends subscriptions and fails later requests with CLOSED', async () => {
    const other = await connect(server.url);
    const subscription = other.subscribe({ all: true });
    await subscription.ready;
    const iterated = collect(subscription);
    await other.close();
    expect(await iterated).toEqual([]);
    expect(other.state).toBe('closed');
    await expect(other.get(1)).rejects.toMatchObject({ code: 'CLOSED' });
  });
});
