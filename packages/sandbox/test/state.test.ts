import { describe, expect, it } from 'vitest';
import type { StateHost } from '../src/index.ts';
import { filePool, run } from './helpers.ts';

// The state global reaches the host's StateHost: the sandbox checks the arguments, values cross by
// structured clone both ways, and a host's error code reaches the program. (The server's durable
// state has its own tests through HTTP and mci serve.)

const pool = filePool({ size: 1 });

/** A host keeping entries in a map, refusing stale versions with VERSION_CONFLICT. */
function mapHost(): StateHost & { calls: string[] } {
  const entries = new Map<string, { value: unknown; version: number }>();
  const calls: string[] = [];
  return {
    calls,
    async get(key) {
      calls.push(`get ${key}`);
      return entries.get(key);
    },
    async set(key, value, options) {
      calls.push(`set ${key} ${JSON.stringify(options)}`);
      const version = entries.get(key)?.version ?? 0;
      if (options.ifVersion !== undefined && options.ifVersion !== version)
        throw Object.assign(new Error(`stale: at ${version}`), { code: 'VERSION_CONFLICT' });
      entries.set(key, { value, version: version + 1 });
      return { version: version + 1 };
    },
    async delete(key) {
      return entries.delete(key);
    },
    async keys(prefix) {
      return [...entries.keys()].filter((key) => key.startsWith(prefix)).sort();
    },
  };
}

describe('state', () => {
  it('round-trips structured-clone values and versions through the host', async () => {
    const state = mapHost();
    const result = await run(
      pool,
      `const m = new Map([[1n, new Date(5)]]); const cyclic = { m }; cyclic.self = cyclic;
       const { version } = await state.set('a', cyclic, { ifVersion: 0 });
       await state.set('b', 1, { ttlMs: 1000 });
       const back = await state.get('a');
       const stale = await state.set('a', 2, { ifVersion: 0 }).catch((e) => e.code + ' ' + e.message);
       return [version, back.self === back, back.m.get(1n).getTime(), await state.get('x'),
         await state.get('x', { withVersion: true }), stale, await state.keys('a'), await state.delete('b'), await state.keys()];`,
      { state },
    );
    expect(result.status).toBe('success');
    expect(result.outputs[0]).toEqual([
      1,
      true,
      5,
      undefined,
      { value: undefined, version: 0 },
      'VERSION_CONFLICT stale: at 1',
      ['a'],
      true,
      ['a'],
    ]);
    expect(state.calls).toContain('set b {"ttlMs":1000}');
  });

  it('refuses bad arguments in the sandbox, before the host sees them', async () => {
    const state = mapHost();
    const result = await run(
      pool,
      `const out = [];
       for (const f of [() => state.get(1), () => state.get('k', { withVersion: 'yes' }), () => state.set('k', 1, []),
         () => state.set('k', 1, { ttlMs: 1.5 }), () => state.keys(5), () => state.delete('x'.repeat(257))])
         try { await f(); out.push('ok'); } catch (e) { out.push(e.name + ': ' + e.message); }
       return out;`,
      { state },
    );
    expect(result.outputs[0]).toEqual([
      'TypeError: state.get: the key must be a string, got number 1',
      'TypeError: state.get: withVersion must be a boolean, got "yes"',
      'TypeError: state.set: options must be an object, got an array',
      expect.stringMatching(/^RangeError: state.set: ttlMs must be an integer from 1/),
      'TypeError: state.keys: the prefix must be a string, got number 5',
      'TypeError: state.delete: the key is 257 characters long; at most 256',
    ]);
    expect(state.calls).toEqual([]);
  });

  it('rejects every call when the host keeps no state', async () => {
    const result = await run(pool, `return await state.get('k').catch((e) => e.message)`);
    expect(result.outputs).toEqual(['state.get is not available: this host keeps no state']);
  });
});
