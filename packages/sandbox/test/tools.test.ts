import type { ToolRunner } from '@mci/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPool, type ToolHost } from '../src/index.ts';
import { fixtureTools, run } from './helpers.ts';

const pool = createSandboxPool({ size: 2 });
let tools: ToolRunner;
beforeAll(async () => {
  tools = await fixtureTools();
});
afterAll(async () => {
  await pool.close();
  await tools.close();
});

describe('tools inside the sandbox', () => {
  it('calls a text tool and resolves to its MCI result, with a tool event', async () => {
    const r = await run(
      pool,
      'const res = await tools.greet({ name: "Ada" });\noutput(res);\nreturn res.content[0].text;',
      {
        tools,
      },
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([
      { isError: false, content: [{ type: 'text', text: 'Hello, Ada!' }] },
      'Hello, Ada!',
    ]);
    expect(r.events[0]).toMatchObject({ seq: 1, type: 'tool', name: 'greet', isError: false });
    expect((r.events[0] as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0);
  });

  it('sends props a setter on Object.prototype cannot intercept', async () => {
    const r = await run(
      pool,
      `Object.defineProperty(Object.prototype, 'name', { set() { throw new Error('setter ran') } });
return (await tools.greet({ name: 'Ada' })).content[0].text`,
      { tools },
    );
    expect(r.outputs).toEqual(['Hello, Ada!']);
  });

  it('reaches tools whose names are not identifiers with brackets', async () => {
    const r = await run(pool, 'return (await tools["name-with-dash"]()).content[0].text', { tools });
    expect(r.outputs).toEqual(['dash works']);
  });

  it('rejects a failing tool with a ToolError naming it and its error (the program can catch it)', async () => {
    const r = await run(
      pool,
      'try { await tools.fail(); } catch (e) { return [e instanceof Error, e.name, e.message]; }',
      { tools },
    );
    expect(r.outputs).toEqual([
      [true, 'ToolError', expect.stringMatching(/^Tool fail failed: Command exited with code 3/)],
    ]);
    expect(r.events[0]).toMatchObject({ type: 'tool', name: 'fail', isError: true });
  });

  it('rejects invalid props (an isError result of the runner) as a ToolError', async () => {
    const r = await run(pool, 'return await tools.greet({ name: 5 }).catch((e) => e.message)', { tools });
    expect(r.outputs).toEqual([
      expect.stringMatching(/^Tool greet failed: Invalid props: props\.name must be string/),
    ]);
  });

  it('never lets the error text of a failed call stand in for data (an uncaught ToolError ends the run)', async () => {
    const r = await run(pool, 'const url = (await tools.fail()).content[0].text;\nawait fetch(url);', {
      tools,
    });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({
      name: 'ToolError',
      message: expect.stringMatching(/^Tool fail failed: /),
    });
  });

  it('throws a TypeError listing close names for an unknown tool', async () => {
    const r = await run(pool, 'await tools.gret({ name: "x" })', { tools });
    expect(r.error).toMatchObject({ name: 'TypeError', line: 1, column: 13 });
    expect(r.error?.message).toBe(
      'Unknown tool "gret". Did you mean tools["greet"]? Available tools: greet, name-with-dash, slow, wait, fail.',
    );
    const none = await run(pool, 'tools.anything()');
    expect(none.error?.message).toBe('Unknown tool "anything". This execution has no tools.');
  });

  it('lists the tools with Object.keys and keeps the object read-only', async () => {
    const r = await run(
      pool,
      "'use strict';\nconst k = Object.keys(tools);\ntry { (tools as any).greet = 1 } catch (e) { return [k, e.name] }",
      {
        tools,
      },
    );
    expect(r.outputs).toEqual([[['greet', 'name-with-dash', 'slow', 'wait', 'fail'], 'TypeError']]);
  });

  it('runs calls concurrently under Promise.all', async () => {
    // Each call answers only once all four are in flight: calls made one after the other would
    // never get there, and the run would end at its timeout.
    let inFlight = 0;
    let allStarted!: () => void;
    const barrier = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const host: ToolHost = {
      list: () => [{ name: 'meet' }],
      async execute() {
        if (++inFlight === 4) allStarted();
        await barrier;
        return { isError: false, content: [{ type: 'text', text: 'met' }] };
      },
    };
    const r = await run(
      pool,
      'const all = await Promise.all([1, 2, 3, 4].map(() => tools.meet({})));\nreturn all.map((x) => x.content[0].text)',
      { tools: host, timeoutMs: 15_000 },
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([['met', 'met', 'met', 'met']]);
  });

  it('throws a TypeError naming the path when props cannot be copied', async () => {
    const r = await run(pool, 'await tools.greet({ name: "x", cb: () => 1 })', { tools });
    expect(r.error?.message).toBe(
      'tools["greet"]() argument: value.cb is a function and cannot be copied out of the sandbox',
    );
  });

  it('rejects the call when the host returns something that cannot be copied', async () => {
    const host: ToolHost = {
      list: () => [{ name: 'odd' }],
      execute: async () => ({ isError: false, content: [], metadata: { callback: () => 1 } }),
    };
    const r = await run(pool, 'try { await tools.odd() } catch (e) { return e.message }', { tools: host });
    expect(r.outputs).toEqual(['The tool result could not be copied']);
  });

  it('rejects the call in the sandbox when the host throws', async () => {
    const host: ToolHost = {
      list: () => [{ name: 'broken' }],
      execute: async () => {
        throw new Error('host exploded');
      },
    };
    const r = await run(
      pool,
      'try { await tools.broken() } catch (e) { return [e.name, e.message, e instanceof Error] }',
      {
        tools: host,
      },
    );
    expect(r.outputs).toEqual([['Error', 'Tool broken failed: host exploded', true]]);
    expect(r.events[0]).toMatchObject({ type: 'tool', name: 'broken', isError: true });
  });

  it('gives a refused call the code the host threw with, so the program can branch on it', async () => {
    const refusing: ToolHost = {
      list: () => [{ name: 'pay' }],
      execute: async () => {
        throw Object.assign(new Error('pay is denied by policy rule 1'), { code: 'POLICY_DENIED' });
      },
    };
    const r = await run(pool, 'try { await tools.pay({}); } catch (e) { return [e.code, e.message]; }', {
      tools: refusing,
    });
    expect(r.outputs).toEqual([['POLICY_DENIED', 'Tool pay failed: pay is denied by policy rule 1']]);
  });
});

describe('Math.random with a seed', () => {
  it('draws the same numbers for the same seed, others for another, uniform in [0, 1)', async () => {
    const code = 'return Array.from({ length: 1000 }, () => Math.random())';
    const [a, b, c] = await Promise.all([
      run(pool, code, { randomSeed: 42 }),
      run(pool, code, { randomSeed: 42 }),
      run(pool, code, { randomSeed: 43 }),
    ]);
    const first = a.outputs[0] as number[];
    expect(b.outputs[0]).toEqual(first);
    expect(c.outputs[0]).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = first.reduce((sum, x) => sum + x, 0) / first.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});
