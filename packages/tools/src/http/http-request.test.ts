import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prepareRequest } from './http-request.ts';

const base = { method: 'GET', timeoutMs: 0, attempts: 1, backoffMs: 0 };

describe('prepareRequest', () => {
  it('encodes any param names and values so the server reads them back unchanged', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(fc.string(), fc.array(fc.string()))),
        (params) => {
          const { url } = prepareRequest({ ...base, url: 'http://127.0.0.1/p?fixed=1', params });
          const read = new URL(url.href).searchParams;
          expect(read.get('fixed')).toBe('1');
          for (const [name, value] of Object.entries(params)) {
            const expected = Array.isArray(value) ? value : [value];
            const got = read.getAll(name);
            expect(name === 'fixed' ? got.slice(1) : got).toEqual(expected);
          }
        },
      ),
    );
  });

  it('serializes form bodies so that any fields round-trip', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.string()), (content) => {
        const { body, headers } = prepareRequest({
          ...base,
          url: 'http://127.0.0.1/',
          body: { type: 'form', content },
        });
        expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
        expect(Object.fromEntries(new URLSearchParams(body))).toEqual(content);
      }),
    );
  });
});
