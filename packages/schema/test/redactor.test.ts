import { describe, expect, it } from 'vitest';
import { Redactor, SecretError, secretsOfUrl, withoutCredentials } from '../src/index.ts';

const KEY = 'sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0ZZ';

describe('Redactor', () => {
  const redactor = new Redactor([
    { name: 'OPENAI_API_KEY', value: KEY },
    { name: 'SHORT_TOKEN', value: 'p4ss-w0rd' },
  ]);

  it('replaces the whole value, wherever it is', () => {
    expect(redactor.redact(`key=${KEY}; again ${KEY}.`)).toBe(
      'key=[redacted:OPENAI_API_KEY]; again [redacted:OPENAI_API_KEY].',
    );
    expect(redactor.redact('user p4ss-w0rd!')).toBe('user [redacted:SHORT_TOKEN]!');
  });

  it('replaces a run of 12 or more of its characters, and leaves shorter runs', () => {
    const tail = KEY.slice(3);
    expect(redactor.redact(`echo ${tail}`)).toBe('echo [redacted:OPENAI_API_KEY]');
    expect(redactor.redact(`a ${KEY.slice(10, 22)} b`)).toBe('a [redacted:OPENAI_API_KEY] b');
    expect(redactor.redact(`a ${KEY.slice(10, 21)} b`)).toBe(`a ${KEY.slice(10, 21)} b`);
    // Split across two log lines: each half is a run of its own.
    expect(redactor.redact(`${KEY.slice(0, 20)}\n${KEY.slice(20)}`)).toBe(
      '[redacted:OPENAI_API_KEY]\n[redacted:OPENAI_API_KEY]',
    );
  });

  it('replaces base64, base64url, JSON and URL-encoded copies', () => {
    for (const prefix of ['', 'x', 'xy', 'Authorization: ']) {
      const encoded = Buffer.from(`${prefix}${KEY}!`).toString('base64');
      expect(redactor.redact(encoded)).toContain('[redacted:OPENAI_API_KEY]');
      const url = Buffer.from(`${prefix}${KEY}`).toString('base64url');
      expect(redactor.redact(url)).toContain('[redacted:OPENAI_API_KEY]');
    }
    const quoted = new Redactor([{ name: 'Q', value: 'ab"cd\\ef/gh&ij=kl' }]);
    expect(quoted.redact(JSON.stringify({ v: 'ab"cd\\ef/gh&ij=kl' }))).toBe('{"v":"[redacted:Q]"}');
    expect(quoted.redact(`?v=${encodeURIComponent('ab"cd\\ef/gh&ij=kl')}`)).toBe('?v=[redacted:Q]');
  });

  it('redacts the strings and keys of a value, and returns the same value when nothing matches', () => {
    const clean = { a: [1, 'two', { three: null }] };
    expect(redactor.redactValue(clean)).toBe(clean);
    expect(redactor.redactValue({ [KEY]: [`x${KEY}`, 2] })).toEqual({
      '[redacted:OPENAI_API_KEY]': ['x[redacted:OPENAI_API_KEY]', 2],
    });
  });

  it('refuses values shorter than 8 characters, naming them', () => {
    expect(() => new Redactor([{ name: 'PORT', value: '8080' }])).toThrow(SecretError);
    expect(() => new Redactor([{ name: 'PORT', value: '8080' }])).toThrow(/PORT is shorter than 8/);
  });

  it('leaves text without secrets as it is, and redacts many secrets in one pass', () => {
    const many = new Redactor(
      Array.from({ length: 20 }, (_, i) => ({
        name: `K${i}`,
        value: `secret-${i}-${'q'.repeat(20)}-${i * 7919}`,
      })),
    );
    const text = 'lorem ipsum '.repeat(1000);
    expect(many.redact(text)).toBe(text);
    expect(many.redact(`${text}secret-7-${'q'.repeat(20)}-55433${text}`)).toBe(`${text}[redacted:K7]${text}`);
  });
});

describe('credentials in URLs', () => {
  it('takes the password and key-like query values as secrets, and hides them in messages', () => {
    const url = 'https://bob:hunter2-long-password@llm.example/v1?api_key=abcdefgh12345&model=x&sig=short';
    expect(secretsOfUrl(url, 'MODEL_URL')).toEqual([
      { name: 'MODEL_URL', value: 'hunter2-long-password' },
      { name: 'MODEL_URL', value: 'abcdefgh12345' },
    ]);
    expect(withoutCredentials(url)).toBe('https://bob:***@llm.example/v1?api_key=***&model=x&sig=***');
    expect(withoutCredentials('http://a')).toBe('http://a');
    expect(secretsOfUrl('not a url', 'X')).toEqual([]);
  });
});
