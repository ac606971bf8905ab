import type { Readable } from 'node:stream';

/**
 * Collects a stream's bytes up to `capBytes`, counting (and discarding) the rest, so a chatty command
 * keeps running to its end instead of being killed or blocking on a full pipe.
 */
export class OutputCollector {
  readonly #chunks: Buffer[] = [];
  readonly #capBytes: number;
  #kept = 0;
  /** Every byte the stream produced, kept or not. */
  totalBytes = 0;

  constructor(stream: Readable | null, capBytes: number) {
    this.#capBytes = capBytes;
    stream?.on('data', (chunk: Buffer) => this.#add(chunk));
  }

  /** True when bytes were dropped. */
  get truncated(): boolean {
    return this.totalBytes > this.#kept;
  }

  /** The kept bytes as UTF-8 text. */
  text(): string {
    return Buffer.concat(this.#chunks, this.#kept).toString('utf8');
  }

  #add(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const room = this.#capBytes - this.#kept;
    if (room <= 0) return;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(kept);
    this.#kept += kept.length;
  }
}
