import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError } from './config-error.ts';
import { DEFAULT_PORT, loadServerSettings } from './load-config.ts';

/** A temporary directory, removed when the test finishes. */
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'mci-config-'));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
};

describe('loadServerSettings', () => {
  it('reads cors.origins and publicUrls from the file; --cors-origin replaces the list, --public-url adds', () => {
    const d = dir();
    writeFileSync(
      join(d, 'server.yaml'),
      'cors: { origins: ["https://chat.example.com"] }\npublicUrls: ["https://mci.example.org"]\n',
    );
    const fromFile = loadServerSettings({ config: 'server.yaml' }, {}, d);
    expect(fromFile).toMatchObject({
      corsOrigins: ['https://chat.example.com'],
      publicUrls: ['https://mci.example.org'],
    });
    const flagged = loadServerSettings(
      { config: 'server.yaml', corsOrigin: ['http://localhost:*'], publicUrl: ['https://b.example'] },
      {},
      d,
    );
    expect(flagged).toMatchObject({
      corsOrigins: ['http://localhost:*'],
      publicUrls: ['https://mci.example.org', 'https://b.example'],
    });
    expect(loadServerSettings({}, {}, d).corsOrigins).toBeUndefined();
  });

  it('has safe defaults', () => {
    const settings = loadServerSettings({}, {}, '/srv');
    expect(settings).toMatchObject({
      host: '127.0.0.1',
      port: DEFAULT_PORT,
      maxQueue: 1000,
      insecure: false,
      tokens: [],
    });
    expect(settings.limits).toMatchObject({
      maxCodeBytes: 102400,
      maxFrameBytes: 1048576,
      timeoutMs: 30000,
      maxWorkerRssMb: 384,
    });
  });

  it('layers file < environment < flags, and resolves paths against their source', () => {
    const d = dir();
    writeFileSync(
      join(d, 'server.yaml'),
      'host: 0.0.0.0\nport: 9000\nfile: tools/mci.yaml\nmaxQueue: 5\nallowNet: [a.local]\n' +
        'tokens:\n  - { token: alice-secret, role: client, id: alice }\n  - { tokenEnv: OPS, role: operator }\nlimits: { maxCodeBytes: 10 }\n',
    );
    const env = {
      OPS: 'ops-secret',
      MCI_PORT: '9001',
      MCI_API_KEY: 'key',
      MCI_CLIENT_TOKENS: 'bob=b1, c2',
      MCI_ALLOW_NET: 'b.local:80',
    };
    const settings = loadServerSettings({ config: 'server.yaml', port: 9002, allowNet: ['c.local'] }, env, d);
    expect(settings).toMatchObject({
      host: '0.0.0.0',
      port: 9002,
      maxQueue: 5,
      file: join(d, 'tools/mci.yaml'),
    });
    expect(settings.allowNet).toEqual(['a.local', 'b.local:80', 'c.local']);
    expect(settings.limits.maxCodeBytes).toBe(10);
    expect(settings.tokens).toEqual([
      { token: 'alice-secret', role: 'client', id: 'alice' },
      { token: 'ops-secret', role: 'operator' },
      { token: 'key', role: 'operator', id: 'operator' },
      { token: 'b1', role: 'client', id: 'bob' },
      { token: 'c2', role: 'client' },
    ]);
    expect(loadServerSettings({}, { MCI_PORT: '9001' }, d).port).toBe(9001);
  });

  it('names the file and field of a bad config', () => {
    const d = dir();
    writeFileSync(
      join(d, 'bad.json'),
      JSON.stringify({ port: 'x', tokens: [{ token: 't', role: 'admin' }] }),
    );
    const error = (() => {
      try {
        loadServerSettings({ config: 'bad.json' }, {}, d);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', path: 'port', file: join(d, 'bad.json') });
    // One path notation everywhere: tools[2].name, tokens[0].role (never tokens.0.role).
    expect((error as Error).message).toMatch(/bad\.json: port: .*; tokens\[0\]\.role: /);
    writeFileSync(join(d, 'typo.yaml'), 'prot: 1\n');
    expect(() => loadServerSettings({ config: 'typo.yaml' }, {}, d)).toThrow(
      /typo\.yaml: prot: unknown field "prot"/,
    );
    writeFileSync(join(d, 'broken.yaml'), 'a: [\n');
    expect(() => loadServerSettings({ config: 'broken.yaml' }, {}, d)).toThrow(/not valid YAML/);
    expect(() => loadServerSettings({ config: 'missing.yaml' }, {}, d)).toThrow(ConfigError);
  });

  it('rejects bad environment values and unset token variables', () => {
    expect(() => loadServerSettings({}, { MCI_PORT: '70000' })).toThrow(/MCI_PORT=70000/);
    expect(() => loadServerSettings({}, { MCI_CONCURRENCY: 'two' })).toThrow(/MCI_CONCURRENCY/);
    const d = dir();
    writeFileSync(join(d, 'c.yaml'), 'tokens: [{ tokenEnv: NOPE, role: client }]\n');
    expect(() => loadServerSettings({ config: 'c.yaml' }, {}, d)).toThrow(/NOPE is not set/);
  });
});
