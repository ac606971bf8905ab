import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from './row-codec.ts';

describe('output values in the store', () => {
  it('stores the output encoding as JSON text', () => {
    const value = { n: { $type: 'bigint', value: '10' } };
    expect(new TextDecoder().decode(encodeValue(value))).toBe(JSON.stringify(value));
    expect(decodeValue(encodeValue(value))).toEqual(value);
  });

  it('reads rows written with the V8 serializer in the output encoding', () => {
    expect(decodeValue(serialize(new Map([['k', 10n]])))).toEqual({
      $type: 'Map',
      entries: [['k', { $type: 'bigint', value: '10' }]],
    });
    expect(decodeValue(serialize({ a: 1 }))).toEqual({ a: 1 });
  });
});
