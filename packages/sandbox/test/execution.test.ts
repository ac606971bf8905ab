import { describe, expect, it, vi } from 'vitest';
import { createSandboxPool, SandboxError } from '../src/index.ts';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 2 });

describe('running a program', () => {
  it('runs TypeScript, streams outputs and records the return value last', async () => {
    const r = await run(
      pool,
      `interface P { x: number }
const p: P = { x: 20 };
output(p.x + 1);
output({ list: [1, 'two', null], when: new Date(0), tags: new Set(['a']), map: new Map([[1, 2]]) });
return p.x * 2;`,
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([
      21,
      { list: [1, 'two', null], when: new Date(0), tags: new Set(['a']), map: new Map([[1, 2]]) },
      40,
    ]);
    expect(r.events.map((e) => e.type)).toEqual(['output', 'output', 'output']);
    expect(r.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(r.error).toBeUndefined();
    expect(r.cpuTimeMs).toBeGreaterThan(0);
    expect(r.heapUsedBytes).toBeGreaterThan(0);
    expect(r.durationMs).toBeGreaterThan(0);
  });

  it('runs JavaScript when lang is js, and rejects TypeScript syntax there', async () => {
    expect((await run(pool, 'return [1, 2].map((x) => x * 2)', { lang: 'javascript' })).outputs).toEqual([
      [2, 4],
    ]);
    const r = await run(pool, 'const x: number = 1', { lang: 'js' });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ name: 'SyntaxError', line: 1 });
  });

  it('supports top-level await and return', async () => {
    const r = await run(
      pool,
      'const v = await Promise.resolve(5);\nif (v > 1) return v;\noutput("unreached")',
    );
    expect(r.outputs).toEqual([5]);
  });

  it('keeps no state between executions (fresh isolate each time)', async () => {
    await run(pool, 'globalThis.leak = 1; Object.prototype.polluted = true');
    for (let i = 0; i < 3; i++) {
      const r = await run(pool, 'return [typeof globalThis.leak, ({}).polluted === undefined]');
      expect(r.outputs).toEqual([['undefined', true]]);
    }
  });

  it('is not derailed by a program that pollutes Object.prototype.then', async () => {
    const r = await run(
      pool,
      'Object.defineProperty(Object.prototype, "then", { value: (resolve: any) => resolve("hijacked"), configurable: true });\noutput(1);',
    );
    expect(r).toMatchObject({ status: 'success', outputs: [1] });
  });

  it('keeps working when the program replaces the array iterator', async () => {
    const r = await run(
      pool,
      'Array.prototype[Symbol.iterator] = function* () {};\nconsole.log("still", 1);\noutput([1, 2]);\nreturn (await tools.echo({ a: 1 })).content.length',
      {
        tools: {
          list: () => [{ name: 'echo' }],
          execute: async () => ({ isError: false, content: [{ type: 'text', text: 'x' }] }),
        },
      },
    );
    expect(r).toMatchObject({ status: 'success', stdout: 'still 1\n', outputs: [[1, 2], 1] });
  });

  it('delivers events in order with increasing seq, all before the result resolves', async () => {
    const seen: number[] = [];
    let resolvedBeforeLast = false;
    const execution = pool.execute({
      code: 'for (let i = 0; i < 50; i++) { console.log(i); output(i); if (i % 10 === 0) await new Promise(r => setTimeout(r, 1)); }',
      onEvent: (e) => seen.push(e.seq),
    });
    void execution.result.then(() => {
      resolvedBeforeLast = seen.length < 100;
    });
    const result = await execution.result;
    expect(result.status).toBe('success');
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(resolvedBeforeLast).toBe(false);
    expect(result.stdout).toBe(Array.from({ length: 50 }, (_, i) => `${i}\n`).join(''));
  });

  it('never loses the messages sent just before the program ends (regression: outcome raced outputs)', async () => {
    const results = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) =>
          pool.execute({
            code: `await fetch('http://127.0.0.1:1/').catch(() => {});\nconsole.log(${i});\nreturn ${i}`,
          }).result,
      ),
    );
    expect(results.map((r) => [r.outputs, r.stdout])).toEqual(
      Array.from({ length: 40 }, (_, i) => [[i], `${i}\n`]),
    );
  });

  it('ignores an onEvent listener that throws', async () => {
    const result = await pool.execute({
      code: 'output(1); output(2)',
      onEvent: () => {
        throw new Error('listener bug');
      },
    }).result;
    expect(result).toMatchObject({ status: 'success', outputs: [1, 2] });
  });

  it('queues executions FIFO when every worker is busy', async () => {
    // Each program reports its start and then waits until the test releases it, so exactly one
    // worker frees at a time and takes the oldest execution still queued.
    const started: number[] = [];
    const releases = new Map<number, () => void>();
    const tools = {
      list: () => [{ name: 'started' }, { name: 'release' }],
      execute: async (name: string, props: unknown) => {
        const { i } = props as { i: number };
        if (name === 'started') started.push(i);
        else await new Promise<void>((resolve) => releases.set(i, resolve));
        return { isError: false, content: [] };
      },
    };
    const executions = Array.from({ length: 6 }, (_, i) =>
      pool.execute({
        code: `await tools.started({ i: ${i} }); await tools.release({ i: ${i} }); return ${i}`,
        tools,
      }),
    );
    await vi.waitFor(() => expect(releases.size).toBe(2), { timeout: 30_000 });
    expect([...started].sort()).toEqual([0, 1]);
    for (let next = 2; next < 6; next++) {
      releases.get(next - 2)!();
      await vi.waitFor(() => expect(releases.has(next)).toBe(true), { timeout: 30_000 });
      expect(started).toHaveLength(next + 1);
      expect(started[next]).toBe(next);
    }
    releases.get(4)!();
    releases.get(5)!();
    const results = await Promise.all(executions.map((e) => e.result));
    expect(results.map((r) => r.outputs[0])).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('errors point into the submitted code', () => {
  it('maps a runtime error to its line and column', async () => {
    const r = await run(pool, 'const a: number = 1;\nconst b = null as any;\n  b.field = a;');
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ name: 'TypeError', line: 3, column: 11 });
    expect(r.error?.message).toContain("Cannot set properties of null (setting 'field')");
    expect(r.error?.stack).toContain('snippet.ts:3:11');
    expect(r.error?.stack).not.toMatch(/bootstrap|worker-execution|isolated-vm/);
  });

  it('maps an error thrown in a nested function (first line too)', async () => {
    const r = await run(
      pool,
      'function inner() { throw new RangeError("deep") }\nfunction outer() { inner() }\nouter()',
    );
    expect(r.error).toMatchObject({ name: 'RangeError', message: 'deep', line: 1, column: 26 });
    expect(r.error?.stack).toContain('at inner (snippet.ts:1:26)');
    expect(r.error?.stack).toContain('at outer (snippet.ts:2:20)');
  });

  it('reports a JavaScript syntax error with its position', async () => {
    const r = await run(pool, 'const ok = 1;\nconst = 2;', { lang: 'js' });
    expect(r.error).toMatchObject({ name: 'SyntaxError', line: 2, column: 7 });
    expect(r.error?.message).not.toContain('[snippet');
  });

  it('reports a TypeScript syntax error with its position', async () => {
    const r = await run(pool, 'let a = 1;\nlet b: number = <;');
    expect(r.error).toMatchObject({ name: 'SyntaxError', line: 2, column: 18 });
  });

  it('explains TypeScript that needs a transform (enum) with its position', async () => {
    const r = await run(pool, 'const x = 1;\n  enum Color { Red }');
    expect(r.error).toMatchObject({ name: 'SyntaxError', line: 2, column: 3 });
    expect(r.error?.message).toMatch(/enum/);
  });

  it('reports throw of non-Error values clearly', async () => {
    expect((await run(pool, 'throw 42')).error).toEqual({ name: 'Error', message: 'Uncaught 42' });
    expect((await run(pool, 'throw "text"')).error).toEqual({ name: 'Error', message: 'Uncaught "text"' });
    expect((await run(pool, 'throw null')).error).toEqual({ name: 'Error', message: 'Uncaught null' });
    expect((await run(pool, 'throw { code: 1 }')).error?.message).toBe('Uncaught [object Object]');
  });

  it('fails on an unhandled promise rejection, even when the program itself completes', async () => {
    const r = await run(pool, 'Promise.reject(new Error("nobody catches me"));\noutput("before");');
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ name: 'Error', message: 'nobody catches me', line: 1, column: 16 });
    const later = await run(
      pool,
      'setTimeout(() => { Promise.reject(new TypeError("late")) }, 5);\nawait new Promise(r => setTimeout(r, 50));',
    );
    expect(later.error).toMatchObject({ name: 'TypeError', message: 'late' });
  });

  it('fails on an error thrown by a timer callback', async () => {
    const r = await run(
      pool,
      'setTimeout(() => { throw new Error("in a timer") }, 1);\nawait new Promise(r => setTimeout(r, 1000));',
    );
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ message: 'in a timer', line: 1, column: 26 });
  });

  it('refuses import and require with a clear error', async () => {
    for (const code of ['import fs from "node:fs";\nfs.readFileSync("/etc/passwd")', 'export const x = 1']) {
      const r = await run(pool, code);
      expect(r.error?.message).toMatch(/import\/export are not available in the sandbox/);
      expect(r.error?.line).toBe(1);
    }
    const js = await run(pool, 'import fs from "node:fs"', { lang: 'js' });
    expect(js.error?.message).toMatch(/import\/export are not available in the sandbox/);
    const dynamic = await run(pool, 'await import("node:fs")');
    expect(dynamic.error?.message).toMatch(/not available in the sandbox/);
    const req = await run(pool, 'const fs = require("fs")');
    expect(req.error).toMatchObject({ name: 'Error', line: 1, column: 12 });
    expect(req.error?.message).toMatch(/require\(\) is not available in the sandbox/);
  });
});

describe('bad requests', () => {
  it('throws SandboxError for a malformed request, synchronously', () => {
    expect(() => pool.execute({ code: 1 as unknown as string })).toThrow(SandboxError);
    expect(() => pool.execute({ code: '', lang: 'python' })).toThrow(/request.lang must be/);
    expect(() => pool.execute({ code: '', timeoutMs: -1 })).toThrow(
      /limits.timeoutMs must be an integer >= 1/,
    );
    expect(() => pool.execute({ code: '', memoryLimitMb: 4 })).toThrow(
      /memoryLimitMb must be an integer >= 8/,
    );
    try {
      pool.execute({ code: '', limits: { maxToolCalls: 1.5 } });
    } catch (e) {
      expect(e).toMatchObject({ code: 'INVALID_LIMIT' });
    }
  });

  it('refuses bad pool options', () => {
    expect(() => createSandboxPool({ size: 0 })).toThrow(/size must be a positive integer/);
    expect(() => createSandboxPool({ allowNet: ['http://x'] })).toThrow(/allowNet entry "http:\/\/x"/);
  });

  it('throws POOL_CLOSED after close', async () => {
    const small = createSandboxPool({ size: 1 });
    await small.close();
    expect(() => small.execute({ code: '1' })).toThrow(expect.objectContaining({ code: 'POOL_CLOSED' }));
  });
});
