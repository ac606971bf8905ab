import { readFileSync } from 'node:fs';
import type { IntentEvent, ProcessEvent, ServerEvent, StreamResultEvent } from '@mci/protocol';
import type { MciServer } from '@mci/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { examplePath } from '@mci/test-support';
import { startInventoryServer } from '../support/inventory-server.ts';
import { http, startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

const transcript = readFileSync(examplePath('transcripts', 'inventory-check.md'), 'utf8');
const notes = readFileSync(examplePath('transcripts', 'notes.txt'), 'utf8').trim();

/** Cuts text into pieces of 1..maxSize UTF-16 units, drawn by fast-check from `seed` (a failure replays). */
function randomChunks(text: string, seed: number, maxSize: number): string[] {
  const sizes = fc.array(fc.integer({ min: 1, max: maxSize }), {
    minLength: text.length,
    maxLength: text.length,
  });
  const [drawn = []] = fc.sample(sizes, { seed, numRuns: 1 });
  // One size per character at most: every size is at least 1, so the sizes cover the text.
  const chunks: string[] = [];
  let at = 0;
  for (const size of drawn) {
    if (at >= text.length) break;
    chunks.push(text.slice(at, at + size));
    at += size;
  }
  return chunks;
}

/** Streams the transcript as one model turn; resolves with that stream's events and result. */
async function streamTurn(client: TestClient, streamId: string, chunks: string[]) {
  await client.ok({ type: 'stream.start', streamId, ref: `msg-${streamId}` });
  for (const text of chunks) client.sendRaw(JSON.stringify({ type: 'stream.chunk', streamId, text }));
  await client.ok({ type: 'stream.end', streamId });
  const result = (await client.waitFor(
    (m) => m.type === 'stream.result' && m.streamId === streamId,
  )) as StreamResultEvent;
  const pids = new Set(result.processes.map((p) => p.pid));
  const events = client
    .events()
    .filter((e) => ('streamId' in e ? e.streamId === streamId : 'pid' in e && pids.has(e.pid)));
  return { result, events };
}

/** Everything the transcript must produce, for one stream. */
async function checkTurn(
  server: MciServer,
  streamId: string,
  turn: { result: StreamResultEvent; events: ServerEvent[] },
) {
  const { result, events } = turn;
  // Intents: six exec blocks in document order; python is rejected; the block without exec is no intent.
  const intents = events.filter((e): e is IntentEvent => e.type === 'intent');
  expect(intents.map((i) => [i.index, i.lang, i.rejected === undefined])).toEqual([
    [0, 'ts', true],
    [1, 'ts', true],
    [2, 'typescript', true],
    [3, 'js', true],
    [4, 'python', false],
    [5, 'ts', true],
  ]);
  expect(intents[1]?.attributes).toMatchObject({ exec: true, id: 'notes', title: 'Read the shipping notes' });
  expect(intents[4]?.pid).toBeUndefined();

  // Processes: one per accepted intent, with the stream's ref and metadata, in intent order.
  const accepted = intents.filter((i) => i.pid !== undefined);
  const pids = accepted.map((i) => i.pid!);
  expect(result.processes.map((p) => p.pid)).toEqual(pids);
  expect(result.ref).toBe(`msg-${streamId}`);
  result.processes.forEach((p, n) => {
    expect(p).toMatchObject({
      ref: `msg-${streamId}`,
      state: 'idle',
      metadata: { streamId, intentIndex: accepted[n]?.index },
    });
  });
  expect(result.processes.map((p) => p.status)).toEqual([
    'success',
    'success',
    'success',
    'success',
    'failed',
  ]);
  expect(result.processes[2]?.timeoutMs).toBe(10000);
  expect(result.processes[4]?.error).toMatchObject({
    message: expect.stringContaining('item 404 is missing'),
    line: 2,
  });

  // Outputs, through the HTTP API and as live events (in the same order).
  const outputs = await Promise.all(
    pids.map(async (pid) => (await http(server, 'GET', `/processes/${pid}/output`)).body.outputs),
  );
  expect(outputs).toEqual([
    ['Hello, Ada!'],
    [{ mentionsBlue: true, notes }],
    [{ id: 42, name: 'blue widget', stock: 7 }, 'in stock'],
    [{ status: 200, echoed: 'service is healthy' }],
    [],
  ]);
  expect((await http(server, 'GET', `/processes/${pids[1]}/stdout`)).text).toMatch(/notes length: \d+/);
  expect(events.filter((e) => e.type === 'output').map((e) => e.type === 'output' && e.value)).toEqual(
    outputs.flat(),
  );

  // Order: the blocks of one stream run one after another; each goes queued -> running -> idle.
  for (let i = 1; i < result.processes.length; i++) {
    expect(Date.parse(result.processes[i]!.startedAt!)).toBeGreaterThanOrEqual(
      Date.parse(result.processes[i - 1]!.endedAt!),
    );
  }
  for (const pid of pids) {
    const states = events
      .filter((e): e is ProcessEvent => e.type === 'process' && e.pid === pid)
      .map((e) => e.state);
    expect(states[0]).toBe('queued');
    expect(states.slice(-2)).toEqual(['running', 'idle']);
  }
  expect(events.at(-1)).toBe(result);

  // The response pipe: per block its index and status, outputs as JSON, the error with its line.
  expect(result.text).toContain('"blue widget"');
  expect(result.text).toContain('Hello, Ada!');
  expect(result.text).toContain('item 404 is missing');
  expect(result.text).toMatch(/python/);
  expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(16 * 1024);
}

describe('a chat transcript streamed over WebSocket', () => {
  const seed = Number(process.env.MCI_E2E_SEED ?? Date.now() % 100_000);

  it(`runs every exec block of two concurrent turns, token-sized and larger chunks (seed ${seed})`, {
    timeout: 120_000,
  }, async () => {
    await using inventory = await startInventoryServer();
    await using server = await startServer(inventory.serverOptions);
    await using client = await TestClient.open(server.wsUrl);

    const [tokens, pieces] = await Promise.all([
      streamTurn(client, 'tokens', randomChunks(transcript, seed, 4)),
      streamTurn(client, 'pieces', randomChunks(transcript, seed + 1, 64)),
    ]);
    expect(client.protocolErrors).toEqual([]);
    expect(client.messages.filter((m) => m.type === 'error')).toEqual([]);
    await checkTurn(server, 'tokens', tokens);
    await checkTurn(server, 'pieces', pieces);

    // Global order: every event once, in seq order.
    const seqs = client.events().map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...inventory.requests].sort()).toEqual([
      'GET /health',
      'GET /health',
      'GET /items/404',
      'GET /items/404',
      'GET /items/42',
      'GET /items/42',
    ]);
  });
});
