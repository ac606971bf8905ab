import { examplePath } from '@mci/test-support';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/server.ts';

// A run that floods outputs and logs is held to the server's bytes per second: past the budget its
// outputs are dropped and its log texts cut, the run is truncated, and its stderr says what was dropped
// (real server, SQLite store, real sandbox, HTTP).

interface RunBody {
  status: string;
  truncated?: boolean;
  outputs: unknown[];
  stdout: string;
  stderr: string;
}

const NOTE =
  /\[mci\] this run is truncated: (\d+) outputs and (\d+) bytes of logs were dropped, over the server's limit of 10000 bytes of outputs and logs per second/;

describe('output floods', () => {
  it('bounds the bytes a run stores and sends per second, and notes what it dropped in stderr', async () => {
    await using server = await createServer({
      file: examplePath('mci.yaml'),
      host: '127.0.0.1',
      port: 0,
      concurrency: 1,
      logLevel: 'silent',
      db: ':memory:',
      limits: { outputBytesPerSecond: 10_000 },
    });
    const code = `
      for (let i = 0; i < 200; i++) output('o'.repeat(998));
      for (let i = 0; i < 200; i++) console.log('l'.repeat(999));
    `;
    const started = performance.now();
    const created = await fetch(`${server.url}/processes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code, block: true }),
    });
    const seconds = (performance.now() - started) / 1000;
    expect(created.status).toBe(201);
    const { pid } = (await created.json()) as { pid: number };
    const run = (await (await fetch(`${server.url}/processes/${pid}/runs/1`)).json()) as RunBody;
    expect(run).toMatchObject({ status: 'success', truncated: true });
    // Each output is 1000 bytes as JSON; each console.log line 1000 bytes with its newline.
    const kept = run.outputs.length * 1000 + Buffer.byteLength(run.stdout);
    expect(kept).toBeLessThanOrEqual(20_000 + 10_000 * seconds);
    expect(run.outputs.length).toBeGreaterThan(0);
    const [, outputs, logBytes] = NOTE.exec(run.stderr) ?? [];
    expect(run.stderr).toMatch(NOTE);
    // Nothing is lost silently: what was kept and what the note counts add up to what the run wrote.
    expect(run.outputs.length + Number(outputs)).toBe(200);
    expect(Buffer.byteLength(run.stdout) + Number(logBytes)).toBe(200 * 1000);
  });
});
