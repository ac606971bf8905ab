import { readFileSync } from 'node:fs';
import type { IntentEvent, ProcessEvent, StreamResultEvent } from '@mci/protocol';
import { describe, expect, it } from 'vitest';
import { startInventoryServer } from '../support/inventory-server.ts';
import { examplePath } from '../support/paths.ts';
import { http, startServer } from '../support/start-server.ts';
import { TestClient } from '../support/ws-client.ts';

const transcript = readFileSync(examplePath('transcripts', 'inventory-check.md'), 'utf8');

/** Cuts text into random pieces of 1..maxSize UTF-16 units (a seeded generator, so failures replay). */
function randomChunks(text: string, seed: number, maxSize: number): string[] {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const chunks: string[] = [];
  for (let at = 0; at < text.length; ) {
    const size = 1 + Math.floor(next() * maxSize);
    chunks.push(text.slice(at, at + size));
    at += size;
  }
  return chunks;
}

describe('a chat transcript streamed over WebSocket', () => {
  const seed = Number(process.env.MCI_E2E_SEED ?? Date.now() % 100_000);

  it(`runs every exec block in order and answers with stream.result (seed ${seed})`, {
    timeout: 90_000,
  }, async () => {
    await using inventory = await startInventoryServer();
    await using server = await startServer({
      env: { INVENTORY_URL: inventory.url },
      allowNet: [inventory.hostPort],
    });
    await using client = await TestClient.open(server.wsUrl);

    await client.ok({ type: 'stream.start', streamId: 'turn-1', ref: 'msg-1' });
    const chunks = randomChunks(transcript, seed, 48);
    for (const text of chunks)
      client.sendRaw(JSON.stringify({ type: 'stream.chunk', streamId: 'turn-1', text }));
    await client.ok({ type: 'stream.end', streamId: 'turn-1' });
    const result = (await client.waitFor((m) => m.type === 'stream.result')) as StreamResultEvent;
    expect(client.protocolErrors).toEqual([]);
    expect(client.messages.filter((m) => m.type === 'error')).toEqual([]);

    // Intents: six exec blocks in document order; the python one is rejected, the plain ts block is not an intent.
    const intents = client.events().filter((e): e is IntentEvent => e.type === 'intent');
    expect(intents.map((i) => [i.index, i.lang, i.rejected === undefined])).toEqual([
      [0, 'ts', true],
      [1, 'ts', true],
      [2, 'typescript', true],
      [3, 'js', true],
      [4, 'python', false],
      [5, 'ts', true],
    ]);
    expect(intents[1]?.attributes).toMatchObject({
      exec: true,
      id: 'notes',
      title: 'Read the shipping notes',
    });
    expect(intents[4]?.pid).toBeUndefined();

    // Processes: one per accepted intent, with the stream's ref and metadata, in intent order.
    const pids = intents.filter((i) => i.pid !== undefined).map((i) => i.pid!);
    expect(pids).toHaveLength(5);
    expect(result.processes.map((p) => p.pid)).toEqual(pids);
    expect(result.ref).toBe('msg-1');
    for (const [n, p] of result.processes.entries()) {
      expect(p).toMatchObject({ ref: 'msg-1', state: 'idle', metadata: { streamId: 'turn-1' } });
      expect(p.metadata?.intentIndex).toBe(intents.filter((i) => i.pid !== undefined)[n]?.index);
    }
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

    // Outputs, through the HTTP API and as live events.
    const outputs = await Promise.all(
      pids.map(async (pid) => (await http(server, 'GET', `/processes/${pid}/output`)).body),
    );
    expect(outputs[0]).toEqual(['Hello, Ada!']);
    expect(outputs[1]).toEqual([
      { mentionsBlue: true, notes: readFileSync(examplePath('transcripts', 'notes.txt'), 'utf8').trim() },
    ]);
    expect(outputs[2]).toEqual([{ id: 42, name: 'blue widget', stock: 7 }, 'in stock']);
    expect(outputs[3]).toEqual([{ status: 200, echoed: 'service is healthy' }]);
    expect(outputs[4]).toEqual([]);
    expect((await http(server, 'GET', `/processes/${pids[1]}/stdout`)).text).toMatch(/notes length: \d+/);
    const liveOutputs = client.events().filter((e) => e.type === 'output');
    expect(liveOutputs.map((e) => e.type === 'output' && e.value)).toEqual(outputs.flat());
    expect(inventory.requests).toEqual(['GET /items/42', 'GET /health', 'GET /items/404']);

    // Order: blocks of one stream run one after another; each process goes queued -> running -> idle.
    for (let i = 1; i < result.processes.length; i++) {
      expect(Date.parse(result.processes[i]!.startedAt!)).toBeGreaterThanOrEqual(
        Date.parse(result.processes[i - 1]!.endedAt!),
      );
    }
    for (const pid of pids) {
      const states = client
        .events()
        .filter((e): e is ProcessEvent => e.type === 'process' && e.pid === pid)
        .map((e) => e.state);
      expect(states[0]).toBe('queued');
      expect(states.slice(-2)).toEqual(['running', 'idle']);
    }
    const seqs = client.events().map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(client.events().at(-1)).toBe(result);

    // The response pipe: per block its index and status, outputs as JSON, the error with its line.
    expect(result.text).toContain('"blue widget"');
    expect(result.text).toContain('Hello, Ada!');
    expect(result.text).toContain('item 404 is missing');
    expect(result.text).toMatch(/python/);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(16 * 1024);
  });
});
