import { describe, expect, it } from 'vitest';
import { bearerToken, createAuthenticator } from './authenticator.ts';
import { isLoopbackHost } from './loopback.ts';

describe('createAuthenticator', () => {
  it('treats every caller as the local operator when no token is configured', () => {
    const auth = createAuthenticator([]);
    expect(auth.required).toBe(false);
    expect(auth.authenticate(undefined)).toEqual({ ok: true, principal: { id: 'local', role: 'operator' } });
    expect(auth.authenticate('anything')).toMatchObject({ ok: true, principal: { role: 'operator' } });
  });

  it('maps tokens to principals with their roles and ids', () => {
    const auth = createAuthenticator([
      { token: 'alice-secret', role: 'client', id: 'alice' },
      { token: 'ops-secret', role: 'operator' },
    ]);
    expect(auth.authenticate('alice-secret')).toEqual({
      ok: true,
      principal: { id: 'alice', role: 'client' },
    });
    const ops = auth.authenticate('ops-secret');
    expect(ops.ok && ops.principal.role).toBe('operator');
    expect(ops.ok && ops.principal.id).toMatch(/^operator-[0-9a-f]{12}$/);
  });

  it('refuses missing, wrong, prefix and longer tokens', () => {
    const auth = createAuthenticator([{ token: 'alice-secret', role: 'client' }]);
    for (const token of [undefined, '', 'alice', 'alice-secret2', 'ALICE-SECRET', 'x'.repeat(10_000)]) {
      expect(auth.authenticate(token)).toMatchObject({ ok: false, code: 'UNAUTHORIZED' });
    }
  });

  it('rejects empty and duplicate tokens at construction', () => {
    expect(() => createAuthenticator([{ token: '', role: 'client' }])).toThrow(/empty/);
    expect(() =>
      createAuthenticator([
        { token: 't', role: 'client' },
        { token: 't', role: 'operator' },
      ]),
    ).toThrow(/share/);
  });

  it('refuses one principal id for two roles, naming it', () => {
    expect(() =>
      createAuthenticator([
        { token: 'operator-token-1', role: 'operator', id: 'operator' },
        { token: 'tok-evil-client-1', role: 'client', id: 'operator' },
      ]),
    ).toThrow('principal id operator has tokens of two roles (operator and client)');
    // Two tokens of one principal (a rotation) are fine.
    expect(
      createAuthenticator([
        { token: 'alice-old-token', role: 'client', id: 'alice' },
        { token: 'alice-new-token', role: 'client', id: 'alice' },
      ]).required,
    ).toBe(true);
  });
});

describe('bearerToken', () => {
  it('reads Bearer credentials only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
  });
});

describe('isLoopbackHost', () => {
  it('knows loopback from the rest', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
