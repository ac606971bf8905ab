import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPool, type ExecutionResult, type Isolation, type ToolHost } from '../src/index.ts';

// What one run leaves behind never reaches the next: in `isolation: context` the runs of one trust
// domain share an isolate (a fresh context each), in `isolation: isolate` every run has its own; other
// domains never share one. Which isolate ran a run is read from `ExecutionResult.isolate`.

let server: Server;
let slowUrl = '';

beforeAll(async () => {
  server = createServer((_req, res) => {
    setTimeout(() => res.end('late'), 300);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
});
afterAll(() => server.close());

/** A tool that answers 300 ms after it is called (after the run that called it has ended). */
const lateTools: ToolHost = {
  list: () => [{ name: 'late' }],
  execute: () =>
    new Promise((resolve) =>
      setTimeout(() => resolve({ isError: false, content: [{ type: 'text', text: 'late' }] }), 300),
    ),
};

const POLLUTE = `
  globalThis.x = 1;
  Array.prototype.evil = 1;
  Object.prototype.polluted = 1;
  Object.prototype[Symbol.for('k')] = 'leak';
  JSON.parse = () => 'hijacked';
  const then = Promise.prototype.then;
  Promise.prototype.then = function (...args) { output('then hijacked'); return then.apply(this, args); };
  Error.prepareStackTrace = () => 'hijacked';
  const tick = () => { output('timer loop of A'); setTimeout(tick, 1); };
  setTimeout(tick, 200);
  setTimeout(() => output('timer of A'), 100);
  tools.late().then(() => output('tool of A'));
  fetch(${JSON.stringify('SLOW_URL')}).then(() => output('fetch of A'));
  new Promise(() => {});
  output('A');`;

const INSPECT = `
  await new Promise((resolve) => setTimeout(resolve, 600));
  output([
    typeof globalThis.x,
    [].evil,
    ({}).polluted,
    ({})[Symbol.for('k')],
    JSON.parse('1'),
    typeof Error.prepareStackTrace,
    new Error('e').stack.includes('hijacked'),
  ]);`;

for (const isolation of ['context', 'isolate'] satisfies Isolation[]) {
  describe(`isolation: ${isolation}`, () => {
    it('a run sees nothing of the one before it, and nothing of it fires during the run', {
      timeout: 30_000,
    }, async () => {
      await using pool = createSandboxPool({ size: 1, isolation, allowNet: ['127.0.0.1'] });
      const run = (code: string, trustDomain: string): Promise<ExecutionResult> =>
        pool.execute({ code, lang: 'js', tools: lateTools, trustDomain, timeoutMs: 10_000 }).result;
      const a = await run(POLLUTE.replace('SLOW_URL', slowUrl), 'alice');
      expect(a.status).toBe('success');
      expect(a.outputs.at(-1)).toBe('A');
      const b = await run(INSPECT, 'alice');
      expect(b.status).toBe('success');
      expect(b.outputs).toEqual([['undefined', undefined, undefined, undefined, 1, 'undefined', false]]);
      if (isolation === 'context') {
        expect(b.isolate).toEqual({ id: a.isolate!.id, run: a.isolate!.run + 1 });
      } else {
        expect(b.isolate?.id).not.toBe(a.isolate?.id);
        expect(b.isolate?.run).toBe(1);
      }
    });

    it('another trust domain never shares an isolate; a stopped run retires its isolate', {
      timeout: 30_000,
    }, async () => {
      await using pool = createSandboxPool({ size: 1, isolation });
      const run = (code: string, trustDomain: string, timeoutMs = 10_000) =>
        pool.execute({ code, lang: 'js', trustDomain, timeoutMs }).result;
      const alice = await run('output(1)', 'alice');
      const alice2 = await run('output(2)', 'alice');
      const bob = await run('output(3)', 'bob');
      const alice3 = await run('output(4)', 'alice');
      expect(bob.isolate?.id).not.toBe(alice.isolate?.id);
      expect(bob.isolate?.id).not.toBe(alice2.isolate?.id);
      if (isolation === 'context') {
        expect(alice2.isolate?.id).toBe(alice.isolate?.id);
        expect(alice3.isolate?.id).toBe(alice.isolate?.id);
      }
      const spin = await run('while (true) {}', 'alice', 300);
      expect(spin.status).toBe('timeout');
      const killed = pool.execute({ code: 'await new Promise(() => {})', lang: 'js', trustDomain: 'alice' });
      setTimeout(() => killed.kill(), 100);
      expect((await killed.result).status).toBe('canceled');
      const after = await run('output(5)', 'alice');
      expect(after.status).toBe('success');
      expect(after.isolate?.run).toBe(1);
      expect([alice.isolate?.id, spin.isolate?.id, (await killed.result).isolate?.id]).not.toContain(
        after.isolate?.id,
      );
    });
  });
}

it('context mode retires an isolate after maxRunsPerIsolate runs', { timeout: 30_000 }, async () => {
  await using pool = createSandboxPool({ size: 1, isolation: 'context', maxRunsPerIsolate: 3 });
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const result = await pool.execute({ code: 'output(1)', trustDomain: 'alice' }).result;
    ids.push(`${result.isolate?.id}#${result.isolate?.run}`);
  }
  const isolates = ids.map((id) => id.split('#')[0]);
  expect(ids.map((id) => id.split('#')[1])).toEqual(['1', '2', '3', '1', '2', '3', '1']);
  expect(new Set(isolates).size).toBe(3);
});
