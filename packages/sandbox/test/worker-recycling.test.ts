import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSandboxPool, SandboxError } from '../src/index.ts';
import { eventually } from './helpers.ts';

const exec = promisify(execFile);

/** The pids of this process's sandbox workers. */
async function workerPids(): Promise<number[]> {
  const { stdout } = await exec('pgrep', ['-P', String(process.pid), '-f', 'worker/mai[n]']).catch(() => ({
    stdout: '',
  }));
  return stdout.split('\n').filter(Boolean).map(Number).sort();
}

describe('maxExecutionsPerWorker', () => {
  it('replaces a worker after its share of executions, losing none', async () => {
    const pool = createSandboxPool({ size: 1, maxExecutionsPerWorker: 3 });
    onTestFinished(() => pool.close());
    expect((await pool.execute({ code: 'output(1)' }).result).outputs).toEqual([1]);
    const [first] = await workerPids();
    expect(first).toBeGreaterThan(0);
    // Queued at once: executions 2 and 3 run on the first worker, the rest on its replacements.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => pool.execute({ code: `output(${i + 2})` }).result),
    );
    expect(results.map((r) => [r.status, r.outputs])).toEqual(
      Array.from({ length: 8 }, (_, i) => ['success', [i + 2]]),
    );
    await eventually(async () => {
      const pids = await workerPids();
      return pids.length === 1 && !pids.includes(first!);
    });
  });

  it('keeps workers for good with Infinity, and rejects nonsense', async () => {
    const pool = createSandboxPool({ size: 1, maxExecutionsPerWorker: Number.POSITIVE_INFINITY });
    onTestFinished(() => pool.close());
    await pool.execute({ code: 'output(1)' }).result;
    const before = await workerPids();
    for (let i = 0; i < 5; i++) await pool.execute({ code: 'output(1)' }).result;
    expect(await workerPids()).toEqual(before);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => createSandboxPool({ maxExecutionsPerWorker: bad })).toThrow(SandboxError);
    }
  });
});
