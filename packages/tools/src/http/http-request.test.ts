import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prepareRequest, requestHref, requestPath, setQueryParam } from './http-request.ts';

const base = { method: 'GET', timeoutMs: 0, attempts: 1, backoffMs: 0 };

describe('prepareRequest', () => {
  it('encodes any param names and values so the server reads them back unchanged', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(fc.string(), fc.array(fc.string()))),
        (params) => {
          const read = new URL(
            requestHref(prepareRequest({ ...base, url: 'http://127.0.0.1/p?fixed=1', params })),
          ).searchParams;
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
  it('builds the same path and URL as appending the params to URL.searchParams', () => {
    const bases = fc.constantFrom(
      'http://127.0.0.1/p',
      'http://127.0.0.1:8080/a%20b/c?x=1&y=b%20c',
      'http://user:pw@example.com/?',
      'https://example.com/q?flag#frag',
    );
    const params = fc.dictionary(
      fc.string({ minLength: 1 }),
      fc.oneof(
        fc.string(),
        fc.integer(),
        fc.constant(undefined),
        fc.array(fc.oneof(fc.string(), fc.constant(undefined))),
      ),
    );
    fc.assert(
      fc.property(
        bases,
        params,
        fc.option(fc.tuple(fc.string({ minLength: 1 }), fc.string())),
        (url, given, key) => {
          const expected = new URL(url);
          for (const [name, value] of Object.entries(given)) {
            for (const item of Array.isArray(value) ? value : [value]) {
              if (item !== undefined) expected.searchParams.append(name, String(item));
            }
          }
          const prepared = prepareRequest({ ...base, url, params: given });
          if (key) {
            expected.searchParams.set(key[0], key[1]);
            setQueryParam(prepared, key[0], key[1]);
          }
          expect(requestPath(prepared)).toBe(`${expected.pathname}${expected.search}`);
          expect(requestHref(prepared)).toBe(expected.href);
          // Preparing one request changes nothing a later request of the same URL sees.
          expect(requestHref(prepareRequest({ ...base, url }))).toBe(new URL(url).href);
        },
      ),
    );
  });
});
