import { describe, expect, it } from 'vitest';
import { QuotaGate } from './quota-gate.ts';
import { LocalQuotaLedger } from './quota-ledger.ts';
import { QuotaPolicy } from './quota-policy.ts';

/** Each principal has 2 runs and 3 processes waiting on the other nodes. */
const elsewhere = { running: () => 2, queued: () => 3 };
const fallback = { maxRunning: 4, maxQueued: 5 };

describe('QuotaGate in a cluster', () => {
  it('counts the other nodes in maxRunning and maxQueued given in the quotas', () => {
    const policy = new QuotaPolicy(
      { default: { maxQueued: 6 }, principals: { alice: { maxRunning: 3 } } },
      fallback,
    );
    const gate = new QuotaGate(policy, new LocalQuotaLedger(), elsewhere);
    expect(gate.maxRunning('alice')).toBe(1);
    expect(gate.capped('alice', 1)).toBe(true);
    expect(gate.capped('alice', 0)).toBe(false);
    expect(() => gate.checkQueued('alice', 2)).not.toThrow();
    expect(() => gate.checkQueued('alice', 3)).toThrow(expect.objectContaining({ code: 'QUOTA_EXCEEDED' }));
    // bob's maxRunning falls back to the per-node setting; his maxQueued comes from `default`.
    expect(gate.maxRunning('bob')).toBe(4);
    expect(gate.capped('bob', 4)).toBe(false);
    expect(() => gate.checkQueued('bob', 3)).toThrow(/waiting in the cluster/);
  });

  it('never gives a negative limit, and counts per node what falls back to the per-node settings', () => {
    const policy = new QuotaPolicy({ principals: { alice: { maxRunning: 1 } } }, fallback);
    const gate = new QuotaGate(policy, new LocalQuotaLedger(), elsewhere);
    expect(gate.maxRunning('alice')).toBe(0);
    expect(() => gate.checkQueued('bob', 4)).not.toThrow();
    expect(() => gate.checkQueued('bob', 5)).toThrow(expect.objectContaining({ code: 'QUOTA_EXCEEDED' }));
  });
});
