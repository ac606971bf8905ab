import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolRunner } from '@mci/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPool, type Execution, type SandboxEvent } from '../src/index.ts';
import { eventually, fixtureTools } from './helpers.ts';

const pool = createSandboxPool({ size: 2 });
let tools: ToolRunner;
let dir: string;
beforeAll(async () => {
  tools = await fixtureTools();
  dir = await mkdtemp(join(tmpdir(), 'mci-sandbox-kill-'));
});
afterAll(async () => {
  await pool.close();
  await tools.close();
  await rm(dir, { recursive: true, force: true });
});

/** Starts `code` and resolves once the program has logged `ready` (so it is really running). */
async function startRunning(code: string, extra: { tools?: ToolRunner } = {}): Promise<Execution> {
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const execution = pool.execute({
    code: `console.log('ready');\n${code}`,
    ...extra,
    onEvent: (e: SandboxEvent) => {
      if (e.type === 'log' && e.text === 'ready\n') ready();
    },
  });
  await isReady;
  return execution;
}

/** Kills `execution` and waits for its result. */
async function kill(execution: Execution) {
  execution.kill();
  return { result: await execution.result };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('kill()', () => {
  it('stops a tight loop', async () => {
    // Canceled by the kill, not ended by the execution's own timeout (speed is in pnpm bench).
    const { result } = await kill(await startRunning('while (true) {}'));
    expect(result.status).toBe('canceled');
    expect(result.error).toEqual({ name: 'CanceledError', message: 'The execution was killed' });
    expect(result.stdout).toBe('ready\n');
  });

  it('stops a program awaiting a timer', async () => {
    const { result } = await kill(
      await startRunning('await new Promise((r) => setTimeout(r, 60_000))'),
    );
    expect(result.status).toBe('canceled');
  });

  it('stops a program awaiting a slow cli tool, and kills the command', async () => {
    const pidFile = join(dir, 'slow.pid');
    const execution = await startRunning(
      `await tools.slow({ pidFile: ${JSON.stringify(pidFile)}, seconds: 60 })`,
      { tools },
    );
    let pid = 0;
    await eventually(async () => {
      pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      return pid > 0;
    });
    expect(alive(pid)).toBe(true);
    const { result } = await kill(execution);
    expect(result.status).toBe('canceled');
    await eventually(() => !alive(pid));
  });

  it('cancels a queued execution at once', async () => {
    const blockers = [1, 2].map(() => pool.execute({ code: 'await new Promise((r) => setTimeout(r, 300))' }));
    const queued = pool.execute({ code: 'output("should not run")' });
    queued.kill();
    const result = await queued.result;
    expect(result).toMatchObject({ status: 'canceled', outputs: [], durationMs: 0 });
    await Promise.all(blockers.map((b) => b.result));
  });

  it('does nothing to a finished execution', async () => {
    const execution = pool.execute({ code: 'return 1' });
    const before = await execution.result;
    execution.kill();
    expect(await execution.result).toBe(before);
    expect(before.status).toBe('success');
  });

  it('leaves the pool serving', async () => {
    await kill(await startRunning('while (true) {}'));
    const results = await Promise.all([1, 2, 3].map((i) => pool.execute({ code: `return ${i}` }).result));
    expect(results.map((r) => r.outputs)).toEqual([[1], [2], [3]]);
  });
});
