import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LocalQuotaLedger, QUOTA_WINDOW_MS } from './quota-ledger.ts';
import { QuotaPolicy } from './quota-policy.ts';

const policy = new QuotaPolicy(
  {
    default: { runsPerMinute: 3 },
    principals: { heavy: { runsPerMinute: 100, cpuMsPerMinute: 500, maxRunning: 1 } },
  },
  { maxRunning: 4, maxQueued: 50 },
);

describe('quota policy', () => {
  it('puts the fields of a named principal over the default, over the per-principal shares', () => {
    expect(policy.of('anyone')).toEqual({
      maxRunning: 4,
      maxQueued: 50,
      runsPerMinute: 3,
      cpuMsPerMinute: Number.POSITIVE_INFINITY,
    });
    expect(policy.of('heavy')).toEqual({
      maxRunning: 1,
      maxQueued: 50,
      runsPerMinute: 100,
      cpuMsPerMinute: 500,
    });
    expect(policy.named()).toEqual(['heavy']);
    expect(policy.windowed).toBe(true);
    expect(new QuotaPolicy(undefined, { maxRunning: 1, maxQueued: 1 }).windowed).toBe(false);
  });

  it('names the field that is not a positive integer', () => {
    expect(
      () => new QuotaPolicy({ principals: { bob: { maxQueued: 0 } } }, { maxRunning: 1, maxQueued: 1 }),
    ).toThrow('quotas.principals.bob.maxQueued must be a positive integer, got 0');
    expect(
      () => new QuotaPolicy({ default: { cpuMsPerMinute: 1.5 } }, { maxRunning: 1, maxQueued: 1 }),
    ).toThrow(/quotas\.default\.cpuMsPerMinute/);
  });
});

describe('local quota ledger', () => {
  it('counts runs in one-minute windows and refuses past the quota until the window ends', () => {
    let now = 10 * QUOTA_WINDOW_MS + 45_000;
    const ledger = new LocalQuotaLedger(() => now);
    const quota = policy.of('anyone');
    for (let i = 0; i < 3; i++) expect(ledger.takeNow('ann', quota)).toBeUndefined();
    expect(ledger.takeNow('ann', quota)).toEqual({
      quota: 'runsPerMinute',
      used: 3,
      limit: 3,
      retryAfterMs: 15_000,
    });
    // Another principal has its own count.
    expect(ledger.takeNow('ben', quota)).toBeUndefined();
    // A refund gives the run back.
    ledger.refund('ann');
    expect(ledger.takeNow('ann', quota)).toBeUndefined();
    expect(ledger.use()).toEqual(
      new Map([
        ['ann', { runs: 3, cpuMs: 0 }],
        ['ben', { runs: 1, cpuMs: 0 }],
      ]),
    );
    now += 15_000;
    expect(ledger.takeNow('ann', quota)).toBeUndefined();
    expect(ledger.use()).toEqual(new Map([['ann', { runs: 1, cpuMs: 0 }]]));
  });

  it('refuses new runs once the CPU time charged in the window reaches cpuMsPerMinute', async () => {
    const now = 7 * QUOTA_WINDOW_MS + 1000;
    const ledger = new LocalQuotaLedger(() => now);
    const quota = policy.of('heavy');
    expect(await ledger.take('heavy', quota)).toBeUndefined();
    ledger.charge('heavy', 499);
    expect(await ledger.take('heavy', quota)).toBeUndefined();
    ledger.charge('heavy', 2);
    expect(await ledger.take('heavy', quota)).toEqual({
      quota: 'cpuMsPerMinute',
      used: 501,
      limit: 500,
      retryAfterMs: 59_000,
    });
  });

  it('in any sequence of takes, refunds and charges, counts at most runsPerMinute and refuses only at a quota', () => {
    const op = fc.oneof(
      fc.constant({ kind: 'take' as const }),
      fc.constant({ kind: 'refund' as const }),
      fc.record({ kind: fc.constant('charge' as const), cpuMs: fc.integer({ min: 1, max: 200 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(op),
        (runs, cpu, ops) => {
          const quota = { maxRunning: 1, maxQueued: 1, runsPerMinute: runs, cpuMsPerMinute: cpu };
          const ledger = new LocalQuotaLedger(() => 5 * QUOTA_WINDOW_MS);
          let counted = 0;
          let cpuMs = 0;
          for (const step of ops) {
            if (step.kind === 'charge') {
              ledger.charge('p', step.cpuMs);
              cpuMs += step.cpuMs;
            } else if (step.kind === 'refund') {
              if (counted === 0) continue;
              ledger.refund('p');
              counted--;
            } else {
              const refusal = ledger.takeNow('p', quota);
              expect(refusal === undefined).toBe(counted < runs && cpuMs < cpu);
              if (!refusal) counted++;
            }
            expect(counted).toBeLessThanOrEqual(runs);
            expect(ledger.use().get('p') ?? { runs: 0, cpuMs: 0 }).toEqual({ runs: counted, cpuMs });
          }
        },
      ),
    );
  });
});
