import { cloneableValue } from '@mci/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeOutputValue, encodeOutputValue } from './output-value.ts';
import { toJson } from './response-pipe.ts';

/** Encode, send as JSON text, decode: what every interface does with an output value. */
const overTheWire = (value: unknown) =>
  decodeOutputValue(JSON.parse(JSON.stringify(encodeOutputValue(value))));

const cloneable = cloneableValue();

describe('encodeOutputValue', () => {
  it('leaves JSON values as they are', () => {
    const value = { a: [1, 'two', true, null, { b: 2.5 }], c: '' };
    expect(encodeOutputValue(value)).toStrictEqual(value);
  });

  it('gives the documented form for each value JSON lacks', () => {
    expect(encodeOutputValue(10n)).toEqual({ $type: 'bigint', value: '10' });
    expect(encodeOutputValue([undefined, Number.NaN, -Infinity, -0])).toEqual([
      { $type: 'undefined' },
      { $type: 'number', value: 'NaN' },
      { $type: 'number', value: '-Infinity' },
      { $type: 'number', value: '-0' },
    ]);
    expect(encodeOutputValue(new Map([['k', new Set([1])]]))).toEqual({
      $type: 'Map',
      entries: [['k', { $type: 'Set', values: [1] }]],
    });
    expect(encodeOutputValue(new Date(0))).toEqual({ $type: 'Date', value: '1970-01-01T00:00:00.000Z' });
    expect(encodeOutputValue(new Uint8Array([1, 2, 3]))).toEqual({ $type: 'Uint8Array', base64: 'AQID' });
    const error = encodeOutputValue(new TypeError('boom')) as Record<string, unknown>;
    expect(error).toMatchObject({ $type: 'Error', name: 'TypeError', message: 'boom' });
    expect(encodeOutputValue({ $type: 'x' })).toEqual({ $type: 'Object', value: { $type: 'x' } });
  });

  it('writes a cycle and a shared object as a JSON Pointer to its first place', () => {
    const node: Record<string, unknown> = { name: 'a' };
    node.self = node;
    const shared = { n: 1 };
    expect(encodeOutputValue({ node, pair: [shared, shared] })).toEqual({
      node: { name: 'a', self: { $ref: '#/node' } },
      pair: [{ n: 1 }, { $ref: '#/pair/0' }],
    });
    const back = overTheWire({ node, pair: [shared, shared] }) as { node: typeof node; pair: object[] };
    expect(back.node.self).toBe(back.node);
    expect(back.pair[0]).toBe(back.pair[1]);
  });

  it('round-trips every structured-clone value through JSON text', () => {
    fc.assert(
      fc.property(cloneable, (value) => {
        expect(overTheWire(value)).toStrictEqual(value);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips through the response pipe line of an output (toJson)', () => {
    fc.assert(
      fc.property(cloneable, (value) => {
        expect(decodeOutputValue(JSON.parse(toJson(encodeOutputValue(value))))).toStrictEqual(value);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips cycles through Maps, Sets, tagged objects and keys that need escaping', () => {
    const map = new Map<unknown, unknown>();
    const set = new Set<unknown>();
    const tagged: Record<string, unknown> = { $ref: 'not a reference', 'a/b~c': set };
    map.set(map, tagged);
    set.add(map);
    tagged.back = tagged;
    const back = overTheWire(map) as Map<unknown, Record<string, unknown>>;
    const [key, value] = [...back.entries()][0] ?? [];
    expect(key).toBe(back);
    expect(value?.$ref).toBe('not a reference');
    expect(value?.back).toBe(value);
    expect([...((value?.['a/b~c'] as Set<unknown> | undefined) ?? [])][0]).toBe(back);
  });

  it('never throws, even on what cannot leave the sandbox', () => {
    expect(encodeOutputValue(() => 1)).toMatchObject({ $type: 'unsupported', kind: 'function' });
    expect(encodeOutputValue(Symbol('s'))).toMatchObject({ $type: 'unsupported', kind: 'symbol' });
  });
});
