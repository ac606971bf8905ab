import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type ToolHost } from '../src/index.ts';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 2, limits: { timeoutMs: 10_000 } });

describe('defaults', () => {
  it('are the documented ones', () => {
    expect(DEFAULT_LIMITS).toEqual({
      timeoutMs: 30_000,
      memoryLimitMb: 128,
      maxOutputBytes: 1024 * 1024,
      maxLogBytes: 1024 * 1024,
      maxToolCalls: 1000,
      maxConcurrentToolCalls: 16,
      maxFetchResponseBytes: 10 * 1024 * 1024,
    });
  });
});

describe('wall time', () => {
  it('times out a tight loop', async () => {
    const r = await run(pool, 'output("started");\nwhile (true) {}', { timeoutMs: 300 });
    expect(r).toMatchObject({ status: 'timeout', outputs: ['started'] });
    expect(r.error).toEqual({ name: 'TimeoutError', message: 'Execution timed out after 300 ms' });
    expect(r.cpuTimeMs).toBeGreaterThan(0);
  });

  it('times out an async loop that never ends and a promise that never settles', async () => {
    const loop = await run(pool, 'while (true) await new Promise((r) => setTimeout(r, 1));', {
      timeoutMs: 300,
    });
    expect(loop.status).toBe('timeout');
    const forever = await run(pool, 'await new Promise(() => {})', { limits: { timeoutMs: 300 } });
    expect(forever.status).toBe('timeout');
  });
});

describe('memory', () => {
  it('fails a memory bomb with a clear error, and the pool keeps serving', async () => {
    const r = await run(
      pool,
      'const hog: number[][] = [];\nwhile (true) hog.push(new Array(1e6).fill(1.5));',
      {
        memoryLimitMb: 32,
      },
    );
    expect(r.status).toBe('failed');
    expect(r.error).toEqual({
      name: 'RangeError',
      message: 'The program ran out of memory (memoryLimitMb 32)',
    });
    expect((await run(pool, 'return 1')).outputs).toEqual([1]);
  });

  it('fails deep recursion with a RangeError', async () => {
    const r = await run(pool, 'function f(n: number): number { return f(n + 1) + 1 }\nf(0)');
    expect(r.error).toMatchObject({
      name: 'RangeError',
      message: 'Maximum call stack size exceeded',
      line: 1,
    });
  });
});

describe('output and log budgets', () => {
  it('drops outputs past maxOutputBytes, says truncated, and completes', async () => {
    const r = await run(
      pool,
      'for (let i = 0; i < 1000; i++) output("x".repeat(100));\nconsole.log("finished")',
      {
        limits: { maxOutputBytes: 1000 },
      },
    );
    expect(r.status).toBe('success');
    expect(r.truncated).toBe(true);
    expect(r.outputs.length).toBeGreaterThan(0);
    expect(r.outputs.length).toBeLessThan(10);
    expect(r.stdout).toBe('finished\n');
  });

  it('cuts logs at maxLogBytes (stdout and stderr together) and completes', async () => {
    const r = await run(
      pool,
      'for (let i = 0; i < 10000; i++) { console.log("é".repeat(50)); console.error("e") }\nreturn "done"',
      {
        limits: { maxLogBytes: 1001 },
      },
    );
    expect(r).toMatchObject({ status: 'success', truncated: true, outputs: ['done'] });
    expect(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr)).toBeLessThanOrEqual(1001);
    expect(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr)).toBeGreaterThan(990);
    expect(r.stdout).not.toContain('\uFFFD');
  });

  it('survives an output flood under the default budget', async () => {
    const r = await run(
      pool,
      'const s = "y".repeat(64 * 1024);\nfor (let i = 0; i < 200; i++) output(s);',
      {},
    );
    expect(r.status).toBe('success');
    expect(r.truncated).toBe(true);
    expect(r.outputs.length).toBe(15);
  });

  it('does not set truncated when nothing was dropped', async () => {
    expect((await run(pool, 'output(1); console.log(1)')).truncated).toBeUndefined();
  });
});

describe('tool call limits', () => {
  /** A host whose tools resolve when told to, counting how many run at once. */
  const countingHost = () => {
    let running = 0;
    let peak = 0;
    let calls = 0;
    const host: ToolHost = {
      list: () => [{ name: 'tick' }],
      async execute() {
        calls++;
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return { isError: false, content: [{ type: 'text', text: 'ok' }] };
      },
    };
    return { host, stats: () => ({ peak, calls }) };
  };

  it('rejects calls past maxToolCalls in the sandbox', async () => {
    const { host, stats } = countingHost();
    const r = await run(
      pool,
      'let ok = 0;\nfor (let i = 0; i < 8; i++) { try { await tools.tick(); ok++ } catch (e) { return [ok, e.name, e.message] } }',
      { tools: host, limits: { maxToolCalls: 5 } },
    );
    expect(r.outputs).toEqual([
      [5, 'RangeError', 'Call limit reached: an execution may make at most 5 tool calls and fetches'],
    ]);
    expect(stats().calls).toBe(5);
  });

  it('runs at most maxConcurrentToolCalls at once; the rest wait their turn', async () => {
    const { host, stats } = countingHost();
    const r = await run(
      pool,
      'const all = await Promise.all(Array.from({ length: 20 }, () => tools.tick()));\nreturn all.length',
      {
        tools: host,
        limits: { maxConcurrentToolCalls: 3 },
      },
    );
    expect(r.outputs).toEqual([20]);
    expect(stats()).toEqual({ peak: 3, calls: 20 });
  });

  it('allows 16 concurrent calls by default', async () => {
    const { host, stats } = countingHost();
    await run(pool, 'await Promise.all(Array.from({ length: 40 }, () => tools.tick()))', { tools: host });
    expect(stats()).toEqual({ peak: 16, calls: 40 });
  });
});

describe('timers limit', () => {
  it('fails a program that piles up pending timers', async () => {
    const r = await run(
      pool,
      'for (let i = 0; i < 20000; i++) setTimeout(() => {}, 60000);\nawait new Promise(() => {})',
    );
    expect(r.error).toEqual({ name: 'RangeError', message: 'Too many pending timers (at most 10000)' });
  });
});

describe('after the program ends', () => {
  it('a timer callback still looping in the isolate does not hold the worker (regression)', async () => {
    // The timer may fire between the program's return and the report: reading the heap figures
    // must not wait for the loop (it used to block the worker until the host killed it).
    for (let i = 0; i < 5; i++) {
      const r = await run(pool, 'setTimeout(() => { while (true) {} }, 0);\nreturn "done"', {
        timeoutMs: 5000,
      });
      expect(r).toMatchObject({ status: 'success', outputs: ['done'] });
    }
    expect((await run(pool, 'return 1')).outputs).toEqual([1]);
  });
});
