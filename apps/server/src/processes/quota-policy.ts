import { checkOption } from './limits.ts';

/**
 * What one principal may use. Every field is a positive integer; an absent one is not limited
 * (`maxRunning` and `maxQueued` then fall back to the manager's per-principal defaults).
 * @see docs/operations.md, "Quotas"
 */
export interface Quota {
  /** Runs of the principal running at once; the others wait in the queue (nothing is refused). */
  maxRunning?: number;
  /** Processes of the principal waiting in the queue; past it a create or `run` gets `QUOTA_EXCEEDED`. */
  maxQueued?: number;
  /** Runs the principal may start (create with autorun, or `run`) per one-minute window. */
  runsPerMinute?: number;
  /** Sandbox CPU time (ms, the runs' `cpuTimeMs`) the principal's runs may use per one-minute window. */
  cpuMsPerMinute?: number;
}

/** Quotas of every principal (`default`) and of named principals (by token id), field by field over it. */
export interface QuotaOptions {
  default?: Quota;
  /** By principal id (a token's `id`): fields given here win over `default`. */
  principals?: Record<string, Quota>;
}

/** The quota of one principal with every field resolved (`Infinity`: not limited). */
export type ResolvedQuota = Required<Quota>;

/** The fields of a {@link Quota} that count processes at once (not per minute). */
export type ConcurrentQuota = 'maxRunning' | 'maxQueued';

const FIELDS = ['maxRunning', 'maxQueued', 'runsPerMinute', 'cpuMsPerMinute'] as const;

/**
 * The quotas of every principal: the fields of `quotas.principals[id]` over those of
 * `quotas.default`, over `fallback` (the manager's `maxRunningPerPrincipal` and
 * `maxQueuedPerPrincipal`; the per-minute quotas are unlimited unless given).
 */
export class QuotaPolicy {
  readonly #default: ResolvedQuota;
  readonly #named = new Map<string, ResolvedQuota>();
  /** The concurrent fields given in `quotas.default`, and per named principal over them. */
  readonly #givenDefault: Set<ConcurrentQuota>;
  readonly #givenNamed = new Map<string, Set<ConcurrentQuota>>();

  /** @throws RangeError naming the first field that is not a positive integer (`quotas.principals.bob.maxQueued`). */
  constructor(quotas: QuotaOptions | undefined, fallback: { maxRunning: number; maxQueued: number }) {
    const base: ResolvedQuota = {
      maxRunning: fallback.maxRunning,
      maxQueued: fallback.maxQueued,
      runsPerMinute: Number.POSITIVE_INFINITY,
      cpuMsPerMinute: Number.POSITIVE_INFINITY,
    };
    this.#default = resolve('quotas.default', quotas?.default, base);
    this.#givenDefault = given(quotas?.default, new Set());
    for (const [id, quota] of Object.entries(quotas?.principals ?? {})) {
      this.#named.set(id, resolve(`quotas.principals.${id}`, quota, this.#default));
      this.#givenNamed.set(id, given(quota, this.#givenDefault));
    }
  }

  /** The quota of principal `id`. */
  of(id: string): ResolvedQuota {
    return this.#named.get(id) ?? this.#default;
  }

  /**
   * Whether `field` of principal `id` was given in `quotas` (for it or in `default`) rather than
   * falling back to the manager's per-principal setting: a cluster counts a given one on every node.
   */
  given(id: string, field: ConcurrentQuota): boolean {
    return (this.#givenNamed.get(id) ?? this.#givenDefault).has(field);
  }

  /** The principals named in `quotas.principals`, in config order. */
  named(): string[] {
    return [...this.#named.keys()];
  }

  /** Whether some principal has a per-minute quota (so runs must be counted in windows). */
  get windowed(): boolean {
    return [this.#default, ...this.#named.values()].some(
      (quota) => Number.isFinite(quota.runsPerMinute) || Number.isFinite(quota.cpuMsPerMinute),
    );
  }
}

function given(quota: Quota | undefined, over: Set<ConcurrentQuota>): Set<ConcurrentQuota> {
  const fields = new Set(over);
  for (const field of ['maxRunning', 'maxQueued'] as const)
    if (quota?.[field] !== undefined) fields.add(field);
  return fields;
}

function resolve(path: string, quota: Quota | undefined, over: ResolvedQuota): ResolvedQuota {
  const resolved = { ...over };
  for (const field of FIELDS) resolved[field] = checkOption(`${path}.${field}`, quota?.[field], over[field]);
  return resolved;
}
