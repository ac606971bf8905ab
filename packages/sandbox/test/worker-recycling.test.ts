import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSandboxPool, DEFAULT_MAX_WORKER_RSS_MB, SandboxError } from '../src/index.ts';
import { WorkerProcess } from '../src/worker-process.ts';
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

describe('maxWorkerRssMb', () => {
  it('replaces a worker whose memory passed the limit after its execution, losing none', async () => {
    // Every worker is past 1 MB: each one runs one execution, then is replaced.
    const pool = createSandboxPool({ size: 1, maxWorkerRssMb: 1 });
    onTestFinished(() => pool.close());
    const seen = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const result = await pool.execute({ code: `output(${i})` }).result;
      expect([result.status, result.outputs]).toEqual(['success', [i]]);
      await eventually(async () => (await workerPids()).length === 1);
      for (const pid of await workerPids()) seen.add(pid);
    }
    expect(seen.size).toBe(3);
  });

  it('keeps a worker under the default limit, and rejects nonsense', async () => {
    expect(DEFAULT_MAX_WORKER_RSS_MB).toBe(384);
    const pool = createSandboxPool({ size: 1 });
    onTestFinished(() => pool.close());
    await pool.execute({ code: 'output(1)' }).result;
    const before = await workerPids();
    for (let i = 0; i < 5; i++) await pool.execute({ code: 'output(1)' }).result;
    expect(await workerPids()).toEqual(before);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => createSandboxPool({ maxWorkerRssMb: bad })).toThrow(SandboxError);
    }
  });
});

describe('warm isolates', () => {
  it('a worker says when its next isolate is ready, after each result', async () => {
    const warm: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const worker = new WorkerProcess({
      onReady: (w) => {
        warm.push(`ready ${w.warm}`);
        ready();
      },
      onWarm: (w) => {
        warm.push(`warm ${w.warm}`);
        done();
      },
      onMessage: (w, message) => {
        if (message.type === 'done') warm.push(`done ${w.warm}`);
      },
      onExit: () => {},
    });
    onTestFinished(async () => {
      worker.kill();
      await worker.exited();
    });
    await started;
    const limits = { timeoutMs: 5000, memoryLimitMb: 128, maxOutputBytes: 1024, maxLogBytes: 1024 };
    worker.send({ type: 'execute', id: 1, code: 'output(1)', lang: 'js', tools: [], limits });
    expect(worker.warm).toBe(false);
    await finished;
    expect(warm).toEqual(['ready true', 'done false', 'warm true']);
  });
});
