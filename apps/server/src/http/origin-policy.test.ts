import { describe, expect, it } from 'vitest';
import { createOriginPolicy } from './origin-policy.ts';

const local = createOriginPolicy({ tokens: false, bindHost: '127.0.0.1' });

describe('createOriginPolicy', () => {
  it('allows local pages on any port in local mode, and nothing else', () => {
    expect(local.corsOrigin('http://localhost:5173')).toBe('http://localhost:5173');
    expect(local.corsOrigin('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(local.corsOrigin('http://localhost')).toBe('http://localhost');
    expect(local.corsOrigin('https://localhost:5173')).toBeNull();
    expect(local.corsOrigin('http://localhost.evil.example:5173')).toBeNull();
    expect(local.corsOrigin('null')).toBeNull();
  });

  it('reads exact origins, :* ports and default ports; refuses what is not an origin', () => {
    const policy = createOriginPolicy({
      tokens: true,
      bindHost: '127.0.0.1',
      corsOrigins: ['https://chat.example.com', 'https://app.example.com:*', 'http://a.example:8080/'],
    });
    expect(policy.corsOrigin('https://chat.example.com')).toBe('https://chat.example.com');
    expect(policy.corsOrigin('https://chat.example.com:443')).toBe('https://chat.example.com:443');
    expect(policy.corsOrigin('https://chat.example.com:8443')).toBeNull();
    expect(policy.corsOrigin('https://app.example.com:9')).toBe('https://app.example.com:9');
    expect(policy.corsOrigin('http://a.example:8080')).toBe('http://a.example:8080');
    expect(policy.corsOrigin('http://localhost:5173')).toBeNull();
    for (const bad of ['chat.example.com', 'https://x.example/path', 'ftp://x.example', '*.example.com'])
      expect(() => createOriginPolicy({ tokens: false, bindHost: '::1', corsOrigins: [bad] })).toThrow(
        /is not an origin/,
      );
  });

  it('refuses Host values that are not names of the server, or that smuggle another host', () => {
    const refused = (host: string | undefined) => local.refusal({ host, origin: undefined })?.reason;
    for (const host of ['localhost:7687', '127.0.0.1:7687', '[::1]:7687', '10.0.0.5', 'a.localhost'])
      expect(refused(host)).toBeUndefined();
    for (const host of [
      undefined,
      '',
      'evil.example',
      'evil.example@127.0.0.1',
      '127.0.0.1/x',
      'localhost evil',
    ])
      expect(refused(host)).toBe('host');
  });

  it('takes a page of the server itself as its own origin', () => {
    expect(local.refusal({ host: 'localhost:7687', origin: 'http://localhost:7687' })).toBeUndefined();
    const tokens = createOriginPolicy({ tokens: true, bindHost: '127.0.0.1' });
    expect(tokens.refusal({ host: '127.0.0.1:7687', origin: 'http://127.0.0.1:7687' })).toBeUndefined();
    expect(tokens.refusal({ host: '127.0.0.1:7687', origin: 'http://127.0.0.1:9999' })?.reason).toBe(
      'origin',
    );
  });
});
