import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostFunction } from './host-functions.ts';

describe('hostFunction (called with untrusted arguments from the sandbox)', () => {
  it('never throws, whatever it is given', () => {
    const op = fc.constantFrom(
      'url.parse',
      'url.set',
      'qs.parse',
      'qs.stringify',
      'utf8.encode',
      'utf8.decode',
      'crypto.randomUUID',
      'crypto.randomBytes',
      'nope',
      7,
    );
    fc.assert(
      fc.property(op, fc.array(fc.anything(), { maxLength: 4 }), (name, args) => {
        expect(() => hostFunction(name, ...args)).not.toThrow();
      }),
    );
  });

  it('parses and updates URLs the way Node does', () => {
    expect(hostFunction('url.parse', '/a?b=1', 'https://h.test/x')).toMatchObject({
      href: 'https://h.test/a?b=1',
      search: '?b=1',
    });
    expect(hostFunction('url.parse', 'no url')).toBeNull();
    expect(hostFunction('url.set', 'https://h.test/', 'pathname', '/p q')).toMatchObject({
      href: 'https://h.test/p%20q',
    });
    expect(hostFunction('url.set', 'https://h.test/', 'origin', 'x')).toBeNull();
  });

  it('returns bytes in fresh buffers, never views on pooled memory', () => {
    const bytes = hostFunction('utf8.encode', 'hé') as Uint8Array;
    expect([...bytes]).toEqual([104, 195, 169]);
    expect(bytes.buffer.byteLength).toBe(bytes.byteLength);
    const random = hostFunction('crypto.randomBytes', 16) as Uint8Array;
    expect(random.buffer.byteLength).toBe(16);
    expect(hostFunction('crypto.randomBytes', 1e9)).toEqual(new Uint8Array(0));
  });

  it('decodes UTF-8 leniently or fatally', () => {
    expect(hostFunction('utf8.decode', new Uint8Array([0x41, 0xff]), false, false)).toEqual({
      ok: true,
      value: 'A\uFFFD',
    });
    expect(hostFunction('utf8.decode', new Uint8Array([0xff]), true, false)).toEqual({
      ok: false,
      value: '',
    });
  });
});
