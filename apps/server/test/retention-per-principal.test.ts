import { examplePath } from '@mci/test-support';
import { describe, expect, it, vi } from 'vitest';
import { createServer, type ServerOptions } from '../src/server.ts';

// Retention counts each principal apart: a client that creates many processes loses its own oldest,
// never another client's (real server, SQLite store, real sandbox, HTTP).

const TOKENS = [
  { token: 'alice-token', role: 'client' as const, id: 'alice' },
  { token: 'mallory-token', role: 'client' as const, id: 'mallory' },
];

/**
 * A server on the example tools with alice's and mallory's tokens and `retention`; `post` creates a
 * process as the owner of `token`, `list` answers the pids that owner sees, in ascending order.
 */
async function retentionServer(retention: ServerOptions['retention']) {
  const server = await createServer({
    file: examplePath('mci.yaml'),
    host: '127.0.0.1',
    port: 0,
    concurrency: 1,
    logLevel: 'silent',
    tokens: TOKENS,
    db: ':memory:',
    retention,
  });
  const post = (token: string, body: object) =>
    fetch(`${server.url}/processes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  const list = async (token: string) => {
    const response = await fetch(`${server.url}/processes`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const { processes } = (await response.json()) as { processes: Array<{ pid: number }> };
    return processes.map((p) => p.pid).sort((a, b) => a - b);
  };
  return Object.assign(server, { post, list });
}

describe('retention per principal', () => {
  it("never erases alice's finished processes because mallory created many", async () => {
    await using server = await retentionServer({ maxProcesses: 20, intervalMs: 50 });
    const { post, list } = server;
    for (let i = 0; i < 10; i++)
      expect((await post('alice-token', { code: `output(${i})`, block: true })).status).toBe(201);
    const alices = await list('alice-token');
    for (let i = 0; i < 30; i++)
      expect((await post('mallory-token', { code: 'output(1)', autorun: false })).status).toBe(201);
    await vi.waitFor(async () => expect(await list('mallory-token')).toHaveLength(20), { timeout: 10_000 });
    const mallorys = await list('mallory-token');
    expect(Math.min(...mallorys)).toBe(Math.max(...alices) + 11);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await list('alice-token')).toEqual(alices);
  });
});

describe('retention bytes per principal', () => {
  it("deletes only mallory's oldest processes when mallory's outputs and logs pass the byte quota", async () => {
    await using server = await retentionServer({ maxBytes: 100_000, intervalMs: 50 });
    const { post, list } = server;
    // About 30 kB each: alice's three fit in 100 kB; mallory's six (outputs and logs) do not.
    for (let i = 0; i < 3; i++)
      expect((await post('alice-token', { code: `output('a'.repeat(30000))`, block: true })).status).toBe(
        201,
      );
    const alices = await list('alice-token');
    const mallorys: number[] = [];
    for (let i = 0; i < 6; i++) {
      const code = i % 2 === 0 ? `output('m'.repeat(30000))` : `console.log('m'.repeat(30000))`;
      const response = await post('mallory-token', { code, block: true });
      expect(response.status).toBe(201);
      mallorys.push(((await response.json()) as { pid: number }).pid);
    }
    await vi.waitFor(async () => expect(await list('mallory-token')).toEqual(mallorys.slice(3)), {
      timeout: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await list('mallory-token')).toEqual(mallorys.slice(3));
    expect(await list('alice-token')).toEqual(alices);
  });
});
