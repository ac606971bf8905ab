import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filePool, run } from './helpers.ts';

const pool = filePool({ size: 2 });

describe('the sandbox global object', () => {
  it('holds the documented globals and nothing from the host', async () => {
    const r = await run(
      pool,
      `return ['output', 'console', 'tools', 'fetch', 'setTimeout', 'clearTimeout', 'URL', 'URLSearchParams',
        'TextEncoder', 'TextDecoder', 'structuredClone', 'crypto', 'Headers', 'require', 'process', 'Buffer',
        'global', 'module', 'exports', '__dirname', 'SharedArrayBuffer', 'Atomics', 'WebAssembly', '__mci_run__']
        .map((n) => n + ':' + typeof globalThis[n]).join(' ')`,
    );
    expect(r.outputs[0]).toBe(
      'output:function console:object tools:object fetch:function setTimeout:function clearTimeout:function ' +
        'URL:function URLSearchParams:function TextEncoder:function TextDecoder:function structuredClone:function ' +
        'crypto:object Headers:function require:function process:undefined Buffer:undefined global:undefined ' +
        'module:undefined exports:undefined __dirname:undefined SharedArrayBuffer:undefined Atomics:undefined ' +
        'WebAssembly:undefined __mci_run__:undefined',
    );
  });
});

describe('output()', () => {
  it('copies values by structured-clone rules (getters read, prototypes dropped, cycles kept)', async () => {
    const r = await run(
      pool,
      `class Point { x: number; constructor(x: number) { this.x = x } get double() { return this.x * 2 } }
const cyclic: any = { name: 'c' }; cyclic.self = cyclic;
output(new Point(3));
output({ get computed() { return 'read' } });
output(cyclic);
output([new Uint8Array([1, 2]), new Float64Array([0.5]), new RegExp('a+', 'gi'), 10n, undefined, -0]);
output(new Error('as data'));`,
    );
    expect(r.status).toBe('success');
    expect(r.outputs[0]).toEqual({ x: 3 });
    expect(r.outputs[1]).toEqual({ computed: 'read' });
    const cyclic = r.outputs[2] as { name: string; self: unknown };
    expect(cyclic.self).toBe(cyclic);
    expect(r.outputs[3]).toEqual([
      new Uint8Array([1, 2]),
      new Float64Array([0.5]),
      /a+/gi,
      10n,
      undefined,
      -0,
    ]);
    expect(r.outputs[4]).toBeInstanceOf(Error);
    expect((r.outputs[4] as Error).message).toBe('as data');
  });

  it('copies subclasses of built-ins by what they are, and class instances and null-prototype objects as plain data', async () => {
    const r = await run(
      pool,
      `class Registry extends Map {}
class Stamp extends Date {}
class Base { a = 1 } class Derived extends Base { b = 2 }
output([new Registry([['k', new Set([1])]]), new Stamp(0), new Derived(), Object.assign(Object.create(null), { n: null })]);
try { output({ deep: { er: [new (class extends WeakMap {})()] } }) } catch (e) { output(e.message) }`,
    );
    expect(r.status).toBe('success');
    expect(r.outputs[0]).toEqual([new Map([['k', new Set([1])]]), new Date(0), { a: 1, b: 2 }, { n: null }]);
    expect(r.outputs[1]).toBe(
      'output(): value.deep.er[0] is a WeakMap and cannot be copied out of the sandbox',
    );
  });

  it('copies large outputs exactly, in order with small ones, as events and in the result', async () => {
    const r = await run(
      pool,
      `const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, at: new Date(i), tags: new Set(['t' + (i % 3)]), big: BigInt(i) }));
const shared = { n: 1 };
output('first');
output({ rows, index: new Map([['a', shared], ['b', shared]]), bytes: new Uint16Array([1, 65535]) });
output('last');`,
    );
    expect(r.status).toBe('success');
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      id: i,
      at: new Date(i),
      tags: new Set([`t${i % 3}`]),
      big: BigInt(i),
    }));
    expect(r.outputs).toEqual([
      'first',
      {
        rows,
        index: new Map([
          ['a', { n: 1 }],
          ['b', { n: 1 }],
        ]),
        bytes: new Uint16Array([1, 65535]),
      },
      'last',
    ]);
    const big = r.outputs[1] as { index: Map<string, object> };
    expect(big.index.get('a')).toBe(big.index.get('b'));
    const outputs = r.events.filter((e) => e.type === 'output');
    expect(outputs.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(outputs.map((e) => e.value)).toEqual(r.outputs);
  });

  it('keeps what JSON would lose: -0, NaN, undefined, shared references, and ignores toJSON a program adds', async () => {
    const r = await run(
      pool,
      `const shared = { s: 1 };
output({ z: -0, n: [NaN, -Infinity], u: undefined, a: [1, undefined], lone: '\\ud800' });
output([shared, shared]);
output({ get inner() { output({ nested: [1] }); return 'read' } });
Object.defineProperty(Array.prototype, 'toJSON', { value: () => 'array hijacked', configurable: true });
output({ list: [1, 2] });
delete Array.prototype.toJSON;
Object.prototype.toJSON = () => 'object hijacked';
output({ list: [3] });`,
    );
    expect(r.status).toBe('success');
    const [first, pair, nested, outer, list, other] = r.outputs as [
      Record<string, unknown>,
      object[],
      unknown,
      unknown,
      unknown,
      unknown,
    ];
    expect(Object.is(first.z, -0)).toBe(true);
    expect(first.n).toEqual([Number.NaN, Number.NEGATIVE_INFINITY]);
    expect(Object.keys(first)).toEqual(['z', 'n', 'u', 'a', 'lone']);
    expect(first.a).toEqual([1, undefined]);
    expect(first.lone).toBe('\ud800');
    expect(pair[0]).toBe(pair[1]);
    expect([nested, outer]).toEqual([{ nested: [1] }, { inner: 'read' }]);
    expect([list, other]).toEqual([{ list: [1, 2] }, { list: [3] }]);
  });

  it('keeps own __proto__ keys, and setters a program put on Object.prototype do not see the copies', async () => {
    const r = await run(
      pool,
      `Object.defineProperty(Object.prototype, 'x', { set() { throw new Error('setter ran') }, configurable: true });
output(JSON.parse('{"__proto__": {"a": 1}, "x": 2}'));
const copy = structuredClone(JSON.parse('{"__proto__": [1], "x": 3}'));
output([Object.getPrototypeOf(copy) === Object.prototype, Object.keys(copy), copy.x, copy.__proto__ === Object.prototype]);`,
    );
    expect(r.status).toBe('success');
    const first = r.outputs[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(first)).toBe(Object.prototype);
    expect(Object.keys(first)).toEqual(['__proto__', 'x']);
    expect(Object.getOwnPropertyDescriptor(first, '__proto__')?.value).toEqual({ a: 1 });
    expect(first.x).toBe(2);
    // structuredClone inside the sandbox keeps the own key too, and gives Object.prototype.
    expect(r.outputs[1]).toEqual([true, ['__proto__', 'x'], 3, false]);
  });

  it('copies built-ins by what they are, not by the prototype they claim', async () => {
    const r = await run(
      pool,
      `const fake = Object.create(Date.prototype); fake.x = 1;
const map = Reflect.construct(Map, [], Error); Map.prototype.set.call(map, 'k', 1);
const date = Reflect.construct(Date, [5], Set);
output([fake, map, date, structuredClone(map)]);`,
    );
    expect(r.status).toBe('success');
    expect(r.outputs[0]).toEqual([{ x: 1 }, new Map([['k', 1]]), new Date(5), new Map([['k', 1]])]);
  });

  it('copies any JSON value out unchanged (property, 200 generated values in one run)', async () => {
    const values = fc
      .sample(fc.jsonValue({ maxDepth: 4 }), { numRuns: 200, seed: 42 })
      .map((v) => JSON.parse(JSON.stringify(v)));
    const r = await run(pool, `for (const v of ${JSON.stringify(values)}) output(v);`);
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual(values);
  });

  it('copies values nested 1000 levels deep and refuses deeper ones at once, with a clear error', async () => {
    const r = await run(
      pool,
      `const nest = (depth: number, leaf: unknown) => { let v: any = leaf; for (let i = 1; i < depth; i++) v = [v]; return v; };
output(nest(1000, [1]));
output(nest(1000, new Date(0)));
try { output(nest(1001, [1])) } catch (e) { output([e.name, e.message]) }
try { output({ deep: nest(5000, new Map()) }) } catch (e) { output(e.message) }`,
      { timeoutMs: 10_000 },
    );
    expect(r.status).toBe('success');
    const depthOf = (v: unknown) => {
      let d = 0;
      for (let x = v; Array.isArray(x); x = x[0]) d++;
      return d;
    };
    expect(depthOf(r.outputs[0])).toBe(1000);
    expect(depthOf(r.outputs[1])).toBe(999);
    expect(r.outputs[2]).toEqual([
      'TypeError',
      `output(): value${'[0]'.repeat(32)}… is nested more than 1000 levels deep and cannot be copied out of the sandbox`,
    ]);
    expect(r.outputs[3]).toBe(
      `output(): value.deep${'[0]'.repeat(31)}… is nested more than 1000 levels deep and cannot be copied out of the sandbox`,
    );
  });

  it('names the value itself in words when it cannot be copied (regression: "$ is a function")', async () => {
    const r = await run(pool, 'output(() => 1)');
    expect(r.error).toMatchObject({
      name: 'TypeError',
      message: 'output(): the value is a function and cannot be copied out of the sandbox',
    });
  });

  it('throws a TypeError naming the path of a part that cannot be copied', async () => {
    const fn = await run(pool, 'output({ items: [1, { callback() {} }] })');
    expect(fn.error).toMatchObject({
      name: 'TypeError',
      message: 'output(): value.items[1].callback is a function and cannot be copied out of the sandbox',
      line: 1,
    });
    const sym = await run(
      pool,
      'try { output(new Map([["k", Symbol("s")]])) } catch (e) { return e.message }',
    );
    expect(sym.outputs).toEqual([
      'output(): value<value 0> is a symbol and cannot be copied out of the sandbox',
    ]);
    const weird = await run(
      pool,
      'try { output({ "odd key": new WeakMap() }) } catch (e) { return e.message }',
    );
    expect(weird.outputs).toEqual([
      'output(): value["odd key"] is a WeakMap and cannot be copied out of the sandbox',
    ]);
  });

  it('awaits a promise value, and the execution waits for it even when the program does not', async () => {
    const r = await run(
      pool,
      'output(new Promise(r => setTimeout(() => r("late"), 30)));\noutput("now");\nreturn "returned";',
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual(['now', 'late', 'returned']);
  });

  it('fails the execution when an un-awaited output promise rejects', async () => {
    const r = await run(pool, 'output(Promise.reject(new Error("bad value")));');
    expect(r.error).toMatchObject({ message: 'bad value' });
    const caught = await run(
      pool,
      'try { await output(Promise.reject(new Error("x"))) } catch { return "handled" }',
    );
    expect(caught.outputs).toEqual(['handled']);
  });

  it('fails when the return value cannot be copied', async () => {
    const r = await run(pool, 'return () => 1');
    expect(r.error?.message).toBe(
      'return value: the value is a function and cannot be copied out of the sandbox',
    );
  });
});

describe('console', () => {
  it('formats like Node (util.format rules, inspected objects) and splits stdout/stderr', async () => {
    const r = await run(
      pool,
      `class Foo { a = 1 }
console.log('%s is %d years and %i days, %o', 'Ann', 42.5, 3.9, { deep: { er: 1 } });
console.info({ a: 1, nested: { b: [1, 2, { c: 3 }] } }, [1, 'x'], null, undefined, 5n);
console.debug(function named() {}, () => {}, class K {}, async function af() {}, Symbol('s'));
console.log(new Map([['k', new Set([1])]]), new Foo(), Object.create(null), { get g() { return 1 } });
console.warn('careful', new Date(0));
console.error(new Error('shown with stack'));
console.log('%c styled', 'color: red', '%j', { j: 1 });`,
    );
    expect(r.stdout.split('\n')).toEqual([
      'Ann is 42.5 years and 3 days, { deep: { er: 1 } }',
      "{ a: 1, nested: { b: [ 1, 2, [Object] ] } } [ 1, 'x' ] null undefined 5n",
      '[Function: named] [Function (anonymous)] [class K] [AsyncFunction: af] Symbol(s)',
      "Map(1) { 'k' => Set(1) { 1 } } Foo { a: 1 } [Object: null prototype] {} { g: [Getter] }",
      ' styled %j { j: 1 }',
      '',
    ]);
    expect(r.stderr).toMatch(
      /^careful 1970-01-01T00:00:00\.000Z\nError: shown with stack\n {4}at snippet\.ts:7:15\n$/,
    );
    expect(r.events.filter((e) => e.type === 'log').map((e) => (e.type === 'log' ? e.stream : ''))).toEqual([
      'stdout',
      'stdout',
      'stdout',
      'stdout',
      'stderr',
      'stderr',
      'stdout',
    ]);
  });
});

describe('timers', () => {
  it('runs setTimeout callbacks in delay order, with arguments, and clearTimeout cancels', async () => {
    const r = await run(
      pool,
      `const seen: string[] = [];
setTimeout((x) => seen.push(x), 30, 'late');
setTimeout(() => seen.push('early'), 5);
const t = setTimeout(() => seen.push('never'), 10);
clearTimeout(t);
await new Promise((r) => setTimeout(r, 60));
return seen;`,
    );
    expect(r.outputs).toEqual([['early', 'late']]);
  });

  it('rejects a non-function callback', async () => {
    const r = await run(pool, 'setTimeout("alert(1)", 1)');
    expect(r.error).toMatchObject({
      name: 'TypeError',
      message: 'setTimeout: the callback must be a function',
    });
  });
});

describe('web APIs', () => {
  it('URL and URLSearchParams follow WHATWG URL (Node behaviour)', async () => {
    const r = await run(
      pool,
      `const u = new URL('../b?x=1&y=a+b#frag', 'https://user:pw@example.com:8080/a/c');
const out: unknown[] = [u.href, u.origin, u.host, u.port, u.pathname, u.search, u.hash, u.username];
u.searchParams.append('z', 'ä &');
u.pathname = '/new path';
out.push(u.toString(), JSON.stringify({ u }));
const p = new URLSearchParams({ b: '2', a: '1' });
p.sort(); p.set('c', '3'); p.append('c', '4');
out.push(p.toString(), p.getAll('c'), p.has('a'), p.get('missing'), [...p.keys()], p.size);
out.push(new URLSearchParams('?q=%20x+y&q=2').getAll('q'), new URLSearchParams([['k', 'v']]).toString());
out.push(URL.canParse('nope'), URL.canParse('/x', 'http://h'));
try { new URL('not a url') } catch (e) { out.push(e.name + ': ' + e.message) }
return out;`,
    );
    expect(r.outputs[0]).toEqual([
      'https://user:pw@example.com:8080/b?x=1&y=a+b#frag',
      'https://example.com:8080',
      'example.com:8080',
      '8080',
      '/b',
      '?x=1&y=a+b',
      '#frag',
      'user',
      'https://user:pw@example.com:8080/new%20path?x=1&y=a+b&z=%C3%A4+%26#frag',
      '{"u":"https://user:pw@example.com:8080/new%20path?x=1&y=a+b&z=%C3%A4+%26#frag"}',
      'a=1&b=2&c=3&c=4',
      ['3', '4'],
      true,
      null,
      ['a', 'b', 'c', 'c'],
      4,
      [' x y', '2'],
      'k=v',
      false,
      true,
      'TypeError: Invalid URL: not a url',
    ]);
  });

  it('TextEncoder and TextDecoder handle UTF-8 (fatal, BOM, streaming)', async () => {
    const r = await run(
      pool,
      `const bytes = new TextEncoder().encode('héllo €😀');
const out: unknown[] = [Array.from(bytes), new TextDecoder().decode(bytes)];
const d = new TextDecoder();
out.push(d.decode(bytes.subarray(0, 2), { stream: true }) + '|' + d.decode(bytes.subarray(2), { stream: true }) + d.decode());
out.push(new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41, 0xff])));
try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])) } catch (e) { out.push(e.name) }
try { new TextDecoder('latin1') } catch (e) { out.push(e.name) }
out.push(new TextDecoder().decode(bytes.buffer));
return out;`,
    );
    expect(r.outputs[0]).toEqual([
      [...new TextEncoder().encode('héllo €😀')],
      'héllo €😀',
      'h|éllo €😀',
      'A\uFFFD',
      'TypeError',
      'RangeError',
      'héllo €😀',
    ]);
  });

  it('structuredClone copies, and throws DataCloneError for functions', async () => {
    const r = await run(
      pool,
      `const src = { d: new Date(5), m: new Map([[1, { x: 1 }]]) };
const copy = structuredClone(src);
let err = '';
try { structuredClone({ f() {} }) } catch (e) { err = e.name + ': ' + e.message }
return [copy !== src, copy.m.get(1) !== src.m.get(1), copy.d.getTime(), err];`,
    );
    expect(r.outputs[0]).toEqual([
      true,
      true,
      5,
      'DataCloneError: structuredClone(): value.f is a function and cannot be copied out of the sandbox',
    ]);
  });

  it('crypto.randomUUID and getRandomValues use the host CSPRNG', async () => {
    const r = await run(
      pool,
      `const ids = new Set(Array.from({ length: 100 }, () => crypto.randomUUID()));
const a = crypto.getRandomValues(new Uint32Array(8));
let err = '';
try { crypto.getRandomValues(new Uint8Array(70000)) } catch (e) { err = e.name }
return [ids.size, [...ids][0], a.some((x) => x !== 0), err];`,
    );
    const [size, id, nonzero, err] = r.outputs[0] as [number, string, boolean, string];
    expect(size).toBe(100);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(nonzero).toBe(true);
    expect(err).toBe('RangeError');
  });

  it('Headers normalizes names and combines values', async () => {
    const r = await run(
      pool,
      `const h = new Headers({ 'X-One': '1' });
h.append('x-one', '2'); h.set('Content-Type', 'text/plain');
let err = '';
try { h.set('bad name', 'x') } catch (e) { err = e.message }
return [h.get('X-ONE'), [...h.keys()], h.has('content-type'), err];`,
    );
    expect(r.outputs[0]).toEqual([
      '1, 2',
      ['content-type', 'x-one'],
      true,
      'Invalid header name: "bad name"',
    ]);
  });
});
