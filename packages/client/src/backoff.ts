/** How a client reconnects after its connection drops. */
export interface ReconnectOptions {
  /** Delay before the first retry, in ms. @default 100 */
  initialDelayMs?: number;
  /** Longest delay between retries, in ms. @default 5000 */
  maxDelayMs?: number;
  /** Growth of the delay per failed attempt. @default 2 */
  factor?: number;
  /** Attempts in a row before giving up (pending requests then fail with `DISCONNECTED`). @default Infinity */
  maxAttempts?: number;
}

/** {@link ReconnectOptions} with every default filled in. */
export type ReconnectPolicy = Required<ReconnectOptions>;

/** Fills in the defaults of {@link ReconnectOptions}; `false` means never reconnect. */
export function reconnectPolicy(
  options: boolean | ReconnectOptions | undefined,
): ReconnectPolicy | undefined {
  if (options === false) return undefined;
  const given = options === true || options === undefined ? {} : options;
  return {
    initialDelayMs: given.initialDelayMs ?? 100,
    maxDelayMs: given.maxDelayMs ?? 5000,
    factor: given.factor ?? 2,
    maxAttempts: given.maxAttempts ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * Delay before retry number `attempt` (from 1): exponential, capped, with "full jitter" (a random delay
 * between half and all of it) so that many clients dropped at once do not reconnect in lockstep.
 * @see https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */
export function backoffDelay(
  policy: ReconnectPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const exponential = policy.initialDelayMs * policy.factor ** Math.max(0, attempt - 1);
  const capped = Math.min(policy.maxDelayMs, exponential);
  return Math.round(capped / 2 + (random() * capped) / 2);
}
