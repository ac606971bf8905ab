/**
 * A token bucket of bytes: it holds at most `burstBytes`, refills at `bytesPerSecond`, and a take
 * succeeds only while the bucket holds enough. Time comes from `performance.now()` (monotonic), so a
 * clock change cannot refill it.
 */
export class ByteRateBudget {
  readonly bytesPerSecond: number;
  readonly burstBytes: number;
  #available: number;
  #refilledAt: number;

  /** @throws RangeError for a rate or burst that is not a positive number. */
  constructor(bytesPerSecond: number, burstBytes = 2 * bytesPerSecond) {
    if (!(bytesPerSecond > 0 && Number.isFinite(bytesPerSecond)))
      throw new RangeError(`bytesPerSecond must be positive, got ${bytesPerSecond}`);
    if (!(burstBytes > 0 && Number.isFinite(burstBytes)))
      throw new RangeError(`burstBytes must be positive, got ${burstBytes}`);
    this.bytesPerSecond = bytesPerSecond;
    this.burstBytes = burstBytes;
    this.#available = burstBytes;
    this.#refilledAt = performance.now();
  }

  /** The whole bytes the bucket holds now. */
  available(): number {
    const now = performance.now();
    this.#available = Math.min(
      this.burstBytes,
      this.#available + ((now - this.#refilledAt) / 1000) * this.bytesPerSecond,
    );
    this.#refilledAt = now;
    return Math.floor(this.#available);
  }

  /** Takes `bytes` if the bucket holds them; `false` (and nothing taken) otherwise. */
  take(bytes: number): boolean {
    if (bytes > this.available()) return false;
    this.#available -= bytes;
    return true;
  }
}
