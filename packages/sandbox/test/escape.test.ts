// The escape suite: known ways out of JavaScript sandboxes (vm2's 2022-2023 advisories among them),
// adapted to this sandbox's globals. Each attack hunts for a Function constructor from the host realm
// and uses it to get `process`; if it ever found one, it would write a marker file through the host's
// `fs`. Every attack must end with no process found and no marker file.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolRunner } from '@mci/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPool, type ToolHost } from '../src/index.ts';
import { fixtureTools, run } from './helpers.ts';

const pool = createSandboxPool({ size: 2, limits: { timeoutMs: 10_000 } });
let dir: string;
let marker: string;
let tools: ToolRunner;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mci-escape-'));
  marker = join(dir, 'pwned');
  tools = await fixtureTools();
});
afterAll(async () => {
  await pool.close();
  await tools.close();
  await rm(dir, { recursive: true, force: true });
});

/** Sandbox code: `probe(candidate)` tries every way from a value to the host's `process`. */
const probePrelude = (markerPath: string) => `
const found: string[] = [];
function probe(label: string, value: any) {
  const tries = [
    () => value,
    () => value.constructor,
    () => value.constructor.constructor,
    () => Object.getPrototypeOf(value).constructor.constructor,
    () => value.__proto__.constructor.constructor,
  ];
  for (const get of tries) {
    let F: any;
    try { F = get(); } catch { continue; }
    if (typeof F !== 'function') continue;
    let p: any;
    try { p = F('return typeof process === "undefined" ? undefined : process')(); } catch { continue; }
    // Only a real process object counts (some bridge functions return promises for any argument).
    if (p && typeof p === 'object' && typeof p.pid === 'number' && typeof p.cwd === 'function') {
      try { p.mainModule.require('fs').writeFileSync(${JSON.stringify(markerPath)}, label); } catch {}
      try { p.getBuiltinModule('fs').writeFileSync(${JSON.stringify(markerPath)}, label); } catch {}
      found.push(label);
    }
  }
}
`;

async function attack(name: string, code: string, extra: { tools?: ToolHost } = {}) {
  const r = await run(pool, `${probePrelude(marker)}\n${code}\nreturn found;`, { tools, ...extra });
  return { name, result: r };
}

function expectContained(outcome: Awaited<ReturnType<typeof attack>>) {
  const { result } = outcome;
  // The attack may fail or succeed as a program; what matters is what it found.
  if (result.status === 'success') expect(result.outputs.at(-1), outcome.name).toEqual([]);
  else expect(result.status, `${outcome.name}: ${JSON.stringify(result.error)}`).toBe('failed');
  expect(existsSync(marker), outcome.name).toBe(false);
  expect(JSON.stringify(result)).not.toMatch(/"ESCAPED"|pwned/);
}

describe('escape suite: reaching the host from sandbox values', () => {
  it('this.constructor.constructor and the global object', async () => {
    expectContained(
      await attack(
        'this',
        "try { probe('this', this) } catch {}\nprobe('globalThis', globalThis);\nprobe('Function this', Function('return this')());",
      ),
    );
  });

  it('the bridge functions (output, console, tools, fetch, timers, web APIs) and their prototypes', async () => {
    expectContained(
      await attack(
        'bridge functions',
        `const values: any[] = [output, console, console.log, console.error, tools, tools.greet, tools['name-with-dash'], fetch,
  setTimeout, clearTimeout, structuredClone, require, URL, URLSearchParams, TextEncoder, TextDecoder, Headers, crypto,
  crypto.randomUUID, crypto.getRandomValues, new URL('http://x'), new TextEncoder(), new Headers(), queueMicrotask];
for (const v of values) {
  probe('value', v);
  for (const key of Reflect.ownKeys(v)) { try { probe('own ' + String(key), v[key]); } catch {} }
  let proto = Object.getPrototypeOf(v);
  while (proto) { probe('proto', proto); for (const k of Reflect.ownKeys(proto)) { try { const d = Object.getOwnPropertyDescriptor(proto, k)!; probe('pk', d.value ?? d.get) } catch {} } proto = Object.getPrototypeOf(proto); }
  try { probe('call', v.call); probe('bind', v.bind(null)); probe('apply', v.apply) } catch {}
}
probe('fetch result', fetch('http://127.0.0.1:1/').catch((e) => e));
probe('tool promise', tools.greet({ name: 'x' }));
probe('tool result', await tools.greet({ name: 'x' }));`,
      ),
    );
  });

  it('errors thrown by the bridge: e.constructor.constructor("return process")()', async () => {
    const host: ToolHost = {
      list: () => [{ name: 'explode' }],
      execute: async () => {
        throw new TypeError('host side error');
      },
    };
    expectContained(
      await attack(
        'bridge errors',
        `const errors: any[] = [];
const grab = async (f: () => unknown) => { try { await f(); } catch (e) { errors.push(e); } };
await grab(() => output(() => 1));
await grab(() => output(Symbol('s')));
await grab(() => structuredClone(new WeakMap()));
await grab(() => tools.explode());
await grab(() => tools.nope);
await grab(() => fetch('http://127.0.0.1:1/'));
await grab(() => fetch('ftp://x/'));
await grab(() => new URL('::'));
await grab(() => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])));
await grab(() => new Headers({ 'bad name': 'x' }));
await grab(() => require('fs'));
await grab(() => crypto.getRandomValues(new Float64Array(1)));
if (errors.length !== 12) throw new Error('expected 12 errors, got ' + errors.length);
for (const e of errors) {
  probe('error', e);
  try { e.constructor.constructor('return process')().mainModule.require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); found.push('direct'); } catch {}
  if (e.stack.includes('/work/') || e.stack.includes('node:')) found.push('host path in stack: ' + e.stack);
}`,
        { tools: host },
      ),
    );
  });

  it('Proxy-wrapped and getter-laden values passed to output, console and tools', async () => {
    expectContained(
      await attack(
        'proxies',
        `const seen: any[] = [];
const handler: ProxyHandler<any> = {};
for (const trap of ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'apply', 'construct', 'defineProperty', 'set', 'deleteProperty', 'isExtensible', 'preventExtensions', 'setPrototypeOf']) {
  (handler as any)[trap] = (...args: any[]) => { seen.push(...args); return (Reflect as any)[trap](...args); };
}
const getters = { get a() { seen.push(this); seen.push(arguments); return 1; }, get [Symbol.toStringTag]() { seen.push(this); return 'X'; } };
const values = [new Proxy({ x: 1, nested: { y: 2 } }, handler), new Proxy([1, 2], handler), new Proxy(new Map([[1, 2]]), handler), getters, new Proxy(getters, handler)];
for (const v of values) {
  try { output(v); } catch {}
  try { console.log(v); } catch {}
  try { await tools.greet(v); } catch {}
  try { structuredClone(v); } catch {}
}
// Probing a proxy runs its traps again, which add to \`seen\`: probe what was seen by the bridge.
for (const s of seen.slice()) probe('trap argument', s);`,
      ),
    );
  });

  it('Symbol.species on arrays, typed arrays, buffers and promises given to the bridge', async () => {
    expectContained(
      await attack(
        'species',
        `const captured: any[] = [];
class EvilArray extends Array { static get [Symbol.species]() { captured.push(arguments); return function (...a: any[]) { captured.push(a); return []; }; } }
const arr = EvilArray.from([1, 2, 3]);
const bytes = new Uint8Array([1, 2, 3]);
(bytes as any).constructor = { [Symbol.species]: function (...a: any[]) { captured.push(a); return new Uint8Array(3); } };
(bytes.buffer as any).constructor = { [Symbol.species]: function (...a: any[]) { captured.push(a); return new ArrayBuffer(3); } };
class EvilPromise extends Promise<any> { static get [Symbol.species]() { return function (exec: any) { exec((v: any) => captured.push(v), (e: any) => captured.push(e)); }; } }
output(arr); output(bytes); output(bytes.buffer); console.log(arr, bytes);
await output(EvilPromise.resolve(1));
await tools.greet({ name: 'x', list: arr, bytes });
for (const c of captured) probe('species', c);`,
      ),
    );
  });

  it('Error.prepareStackTrace to collect call sites around bridge calls', async () => {
    expectContained(
      await attack(
        'prepareStackTrace',
        `const frames: any[] = [];
(Error as any).prepareStackTrace = (err: any, callSites: any[]) => {
  for (const cs of callSites) { frames.push(cs); try { frames.push(cs.getThis(), cs.getFunction(), cs.getEvalOrigin()); } catch {} }
  return 'stack';
};
try { output(() => 1); } catch (e) { e.stack; }
try { await tools.greet({ name: 1 as any }).then((r) => { throw new Error(String(r)); }); } catch (e) { e.stack; }
try { await fetch('http://127.0.0.1:1/'); } catch (e) { e.stack; }
try { new URL('bad'); } catch (e) { e.stack; }
console.log(new Error('while logging'));
new Error('plain').stack;
for (const f of frames) probe('call site', f);`,
      ),
    );
  });
});

describe('escape suite: vm2 advisories adapted', () => {
  it('CVE-2022-36067 (SandBreak): replacing Error to intercept host stack traces', async () => {
    expectContained(
      await attack(
        'CVE-2022-36067',
        `const OldError = Error;
const sites: any[] = [];
globalThis.Error = { prepareStackTrace: (e: any, s: any[]) => { sites.push(...s); return ''; } } as any;
try { output(() => 1); } catch (e) { probe('err', e); }
try { await tools.explode_not_here(); } catch (e) { probe('err2', e); }
globalThis.Error = OldError;
for (const s of sites) { try { probe('site', s.getThis()); probe('fn', s.getFunction()); } catch {} }`,
      ),
    );
  });

  it('CVE-2023-29017: exceptions inside Promise handlers and async functions', async () => {
    expectContained(
      await attack(
        'CVE-2023-29017',
        `(Error as any).prepareStackTrace = (e: any, frames: any[]) => { frames.forEach((f) => { try { probe('frame this', f.getThis()); } catch {} }); return ''; };
async function fn() { throw new Error('from async'); }
await fn().catch((e) => probe('caught', e));
await fetch('http://127.0.0.1:1/').catch((e) => probe('fetch rejection', e));
await Promise.reject(Symbol('s')).catch((e) => probe('symbol rejection', Object(e)));`,
      ),
    );
  });

  it('CVE-2023-30547: a host exception raised while formatting an error (Proxy in name.toString)', async () => {
    expectContained(
      await attack(
        'CVE-2023-30547',
        `const err = new Error('x');
(err as any).name = { toString: new Proxy(() => '', { apply(target, self, args: any) { probe('args', args); probe('self', self); return 'N'; } }) };
try { err.stack; } catch (e) { probe('stack error', e); }
try { console.log(err); } catch (e) { probe('log error', e); }
try { output(err); } catch (e) { probe('output error', e); }
try { throw err; } catch (e) { probe('thrown', e); }`,
      ),
    );
    // Thrown out of the program, the same error reaches the worker's error reporting.
    const thrown = await run(
      pool,
      `const err = new Error('x');\n(err as any).name = { toString: new Proxy(() => '', { apply() { return 'Named' } }) };\nthrow err;`,
    );
    expect(thrown.status).toBe('failed');
    expect(existsSync(marker)).toBe(false);
  });

  it('CVE-2023-32314: Symbol error names and unexpected host object creation', async () => {
    expectContained(
      await attack(
        'CVE-2023-32314',
        `const err = new Error('x');
(err as any).name = Symbol();
const f = async () => err.stack;
await f().catch((e) => probe('symbol name', e));
try { console.error(err); } catch (e) { probe('console', e); }
try { output(err); } catch (e) { probe('output', e); }`,
      ),
    );
  });

  it('CVE-2023-37466: Promise @@species to run code as a host Promise handler', async () => {
    expectContained(
      await attack(
        'CVE-2023-37466',
        // The advisory recursed until the stack overflowed; a bounded depth gives the same rejection
        // without burning CPU time.
        `async function fn() { (function stack(n: number) { new Error().stack; if (n > 0) stack(n - 1); else throw new RangeError('deep'); })(2000); }
const p: any = fn();
p.constructor = { [Symbol.species]: class FakePromise { constructor(executor: any) { executor((x: any) => x, (err: any) => { probe('rejection', err); }); } } };
p.then();
const q: any = tools.greet({ name: 'x' });
q.constructor = p.constructor;
q.then();
await new Promise((r) => setTimeout(r, 10));`,
      ),
    );
  });

  it('CVE-2023-37903: custom inspect functions and toJSON hooks handed to the host', async () => {
    expectContained(
      await attack(
        'CVE-2023-37903',
        `const custom = Symbol.for('nodejs.util.inspect.custom');
const hook = (depth: any, options: any, inspect: any) => { probe('inspect', inspect); probe('options', options); return 'x'; };
const obj: any = { [custom]: hook, inspect: hook, toJSON() { probe('toJSON this', this); return 1; }, toString() { probe('toString', this); return 's'; } };
console.log(obj, new Proxy(obj, {}));
console.log('%s %o %O %j', obj, obj, obj, obj);
try { output(obj); } catch (e) { probe('output', e); }
await tools.greet({ name: 'x', obj: { toJSON: undefined } });`,
      ),
    );
  });
});

describe('escape suite: what is reachable at all', () => {
  it('no isolated-vm handle (Reference, ExternalCopy, Callback, Isolate) is reachable from the global object', async () => {
    const r = await run(
      pool,
      `const seen = new Set<any>();
const queue: any[] = [globalThis];
const suspicious: string[] = [];
while (queue.length > 0) {
  const v = queue.shift();
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v)) continue;
  seen.add(v);
  const tag = Object.prototype.toString.call(v);
  const ctor = (() => { try { return Object.getOwnPropertyDescriptor(Object.getPrototypeOf(v) ?? {}, 'constructor')?.value?.name } catch { return '?' } })();
  if (/Reference|ExternalCopy|Callback|Isolate|Context|Script|ivm/i.test(tag + ' ' + ctor)) suspicious.push(tag + ' ' + ctor);
  queue.push(Object.getPrototypeOf(v));
  for (const key of Reflect.ownKeys(v)) {
    const d = Object.getOwnPropertyDescriptor(v, key);
    if (d) queue.push(d.value, d.get, d.set);
  }
}
return [seen.size, suspicious];`,
    );
    const [size, suspicious] = r.outputs[0] as [number, string[]];
    expect(size).toBeGreaterThan(500);
    expect(suspicious).toEqual([]);
  });

  it('the host-side functions behind URL, TextDecoder and crypto are not reachable by name', async () => {
    const r = await run(
      pool,
      `return [typeof (globalThis as any).send, typeof (globalThis as any).call, typeof (globalThis as any).control,
  typeof (globalThis as any).__mci_run__, String(output).includes('native code'), Object.getOwnPropertyNames(output)]`,
    );
    expect(r.outputs[0]).toEqual([
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      false,
      // output.image and output.file: functions of the bootstrap, as output itself is.
      ['length', 'name', 'prototype', 'image', 'file'],
    ]);
  });

  it('the worker process has an empty environment (nothing to steal even past V8)', async () => {
    // Seen from the host: the workers are children of this process; their environ is readable on Linux.
    const { execFileSync } = await import('node:child_process');
    const script = `for p in $(pgrep -P ${process.pid} -f 'worker/mai[n]'); do echo "pid $p"; tr '\\0' '\\n' < /proc/$p/environ | cut -d= -f1; done`;
    const lines = execFileSync('sh', ['-c', script], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
    expect(lines.filter((l) => l.startsWith('pid ')).length).toBeGreaterThan(0);
    // Only the IPC channel variables Node itself sets for fork().
    expect(lines.filter((l) => !l.startsWith('pid ') && !l.startsWith('NODE_CHANNEL_'))).toEqual([]);
  });

  it('a server on the host loopback is out of reach by default', async () => {
    let hits = 0;
    const server = createServer((_, res) => {
      hits++;
      res.end('secret');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const r = await run(
        pool,
        `return await fetch('http://127.0.0.1:${port}/').then((x) => x.text(), (e) => e.message)`,
      );
      expect(r.outputs[0]).toMatch(/is not allowed: the sandbox reaches only the hosts a rule allows/);
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
  });
});
