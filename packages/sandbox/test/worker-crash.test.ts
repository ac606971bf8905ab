import { describe, expect, it } from 'vitest';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 1 });

// Growing a dictionary-mode object in a tiny isolate makes V8 abort the whole process
// ("CALL_AND_RETRY_LAST ... is_heap_oom"), which isolated-vm's memory limit cannot turn into an
// exception: only the worker process dies.
const PROCESS_KILLING_BOMB = 'const o: Record<string, number> = {};\nfor (let i = 0; ; i++) o["k" + i] = i;';

describe('a worker that dies', () => {
  it('fails its execution with a clear error and is replaced', async () => {
    expect((await run(pool, 'return "before"')).outputs).toEqual(['before']);
    const events: string[] = [];
    const crashed = await run(pool, `console.log('about to explode');\n${PROCESS_KILLING_BOMB}`, {
      memoryLimitMb: 8,
    });
    events.push(...crashed.events.map((e) => e.type));
    expect(crashed.status).toBe('failed');
    expect(crashed.error?.name).toBe('SandboxError');
    expect(crashed.error?.message).toMatch(/^The sandbox worker process was killed by SIGABRT/);
    // The line naming the failure, although V8 and Node print a stack trace after it.
    // (isolated-vm's catastrophic-error handler or V8's own fatal error, whichever comes first.)
    expect(crashed.error?.message).toMatch(/out-of-memory|out of memory|CALL_AND_RETRY_LAST/i);
    expect(crashed.stdout).toBe('about to explode\n');
    // The replacement serves the next executions, including queued ones.
    const after = await Promise.all([1, 2, 3].map((i) => pool.execute({ code: `return ${i}` }).result));
    expect(after.map((r) => r.outputs)).toEqual([[1], [2], [3]]);
  });

  it('keeps serving after repeated crashes', async () => {
    for (let i = 0; i < 2; i++) {
      const crashed = await run(pool, PROCESS_KILLING_BOMB, { memoryLimitMb: 8 });
      expect(crashed.status).toBe('failed');
    }
    expect((await run(pool, 'return "alive"')).outputs).toEqual(['alive']);
  });
});

describe('a worker that stops answering', () => {
  it('is SIGKILLed after kill() and replaced, while kill() resolves at once', async () => {
    const { execFileSync } = await import('node:child_process');
    const workerPids = () =>
      execFileSync('sh', ['-c', `pgrep -P ${process.pid} -f 'worker/mai[n]' || true`], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter(Boolean)
        .map(Number);
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const execution = pool.execute({
      code: 'console.log("ready");\nwhile (true) {}',
      onEvent: () => ready(),
    });
    await started;
    // Vitest runs each test file in its own process, so these are this pool's workers only.
    const frozen = workerPids();
    expect(frozen).toHaveLength(1);
    process.kill(frozen[0]!, 'SIGSTOP');
    execution.kill();
    const result = await execution.result;
    expect(result).toMatchObject({ status: 'canceled', stdout: 'ready\n', cpuTimeMs: 0 });
    // The frozen worker never confirms: it is SIGKILLed and a replacement serves the next run.
    expect((await run(pool, 'return "replaced"')).outputs).toEqual(['replaced']);
    expect(workerPids()).not.toContain(frozen[0]);
  });
});
