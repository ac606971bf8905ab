import { describe, expect, it } from 'vitest';
import { storageSettings } from './storage-flags.ts';

describe('storageSettings', () => {
  it('takes the byte quota per principal from --retention-max-bytes, then MCI_RETENTION_MAX_BYTES', () => {
    expect(storageSettings({ db: ':memory:', retentionMaxBytes: 5000 }, {}).retention).toEqual({
      maxBytes: 5000,
    });
    expect(
      storageSettings({ db: ':memory:' }, { MCI_RETENTION_MAX_BYTES: '7000', MCI_RETENTION_MAX: '3' })
        .retention,
    ).toEqual({ maxBytes: 7000, maxProcesses: 3 });
    expect(storageSettings({ db: ':memory:' }, {}).retention).toEqual({});
  });

  it('refuses a malformed MCI_RETENTION_MAX_BYTES, naming it', () => {
    expect(() => storageSettings({ db: ':memory:' }, { MCI_RETENTION_MAX_BYTES: '1e3x' })).toThrow(
      /MCI_RETENTION_MAX_BYTES=1e3x/,
    );
  });

  it('takes cluster mode and the lease time from --cluster and --node-lease-ms, then MCI_CLUSTER and MCI_NODE_LEASE_MS', () => {
    expect(storageSettings({ db: 'postgres://h/db', cluster: true, nodeLeaseMs: 3000 }, {})).toMatchObject({
      cluster: true,
      nodeLeaseMs: 3000,
    });
    expect(
      storageSettings(
        { db: 'postgres://h/db' },
        { MCI_CLUSTER: 'true', MCI_NODE_LEASE_MS: '4000', MCI_NODE: 'a' },
      ),
    ).toMatchObject({ cluster: true, nodeLeaseMs: 4000, node: 'a' });
    expect(storageSettings({ db: 'postgres://h/db' }, {})).not.toHaveProperty('cluster');
    expect(() => storageSettings({ db: 'postgres://h/db' }, { MCI_NODE_LEASE_MS: '10' })).toThrow(
      /MCI_NODE_LEASE_MS=10/,
    );
    expect(storageSettings({ db: 'postgres://h/db' }, { MCI_CLUSTER: '0' })).toMatchObject({
      cluster: false,
    });
  });
});
