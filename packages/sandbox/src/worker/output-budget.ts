import { serialize } from 'node:v8';
import { SERIALIZED_OUTPUT_BYTES, type WorkerEvent } from '../protocol.ts';

/**
 * Byte budgets for one execution's outputs and logs. An output that does not fit is dropped whole
 * (sizes are what crosses the IPC channel: the UTF-8 bytes of an output sent as JSON text, else the
 * V8 serialized size); a log line is cut at the budget.
 * Either sets `truncated`; the program keeps running.
 */
export class OutputBudget {
  #outputBytes = 0;
  #logBytes = 0;
  truncated = false;
  readonly #maxOutputBytes: number;
  readonly #maxLogBytes: number;

  constructor(maxOutputBytes: number, maxLogBytes: number) {
    this.#maxOutputBytes = maxOutputBytes;
    this.#maxLogBytes = maxLogBytes;
  }

  /**
   * The event for an output the isolate sent, counted against the budget; `undefined` when it is
   * dropped (or, as JSON text, is not a string). `json`: the value is JSON text, counted as its UTF-8
   * bytes; else it is counted as its V8 serialization, and a large one goes as those very bytes (see
   * {@link SERIALIZED_OUTPUT_BYTES}) so it need not be serialized again to be sent.
   */
  outputEvent(value: unknown, json: boolean): WorkerEvent | undefined {
    const full = this.#outputBytes >= this.#maxOutputBytes;
    if (json) {
      if (typeof value !== 'string') return undefined;
      if (full || !this.#take(Buffer.byteLength(value))) return this.#drop();
      return { type: 'output', json: value };
    }
    if (full) return this.#drop();
    let bytes: Buffer;
    try {
      bytes = serialize(value);
    } catch {
      return this.#drop();
    }
    if (!this.#take(bytes.byteLength)) return this.#drop();
    return bytes.byteLength >= SERIALIZED_OUTPUT_BYTES
      ? { type: 'output', serialized: bytes }
      : { type: 'output', value };
  }

  /**
   * Counts a picture or file of `size` bytes (what crosses the channel) if it fits in what is left;
   * else counts nothing and returns why, for the program to see as an error (not a silent drop).
   */
  takeMedia(size: number, what: string): string | undefined {
    const left = Math.max(0, this.#maxOutputBytes - this.#outputBytes);
    if (size <= left) {
      this.#outputBytes += size;
      return undefined;
    }
    return `${what}: ${size} bytes do not fit in this run's output limit (${left} of ${this.#maxOutputBytes} bytes left, limits.maxOutputBytes)`;
  }

  /** Counts an output of `size` bytes if it fits; else spends the budget (the caller drops it). */
  #take(size: number): boolean {
    if (this.#outputBytes + size > this.#maxOutputBytes) {
      this.#outputBytes = this.#maxOutputBytes;
      return false;
    }
    this.#outputBytes += size;
    return true;
  }

  /** Whether the log budget is spent (later log calls need not even be formatted). */
  get logsFull(): boolean {
    return this.#logBytes >= this.#maxLogBytes;
  }

  /** The part of `text` that still fits (possibly empty). */
  takeLog(text: string): string {
    const left = this.#maxLogBytes - this.#logBytes;
    if (left <= 0) {
      this.#drop();
      return '';
    }
    const bytes = Buffer.byteLength(text);
    if (bytes <= left) {
      this.#logBytes += bytes;
      return text;
    }
    this.#logBytes = this.#maxLogBytes;
    this.truncated = true;
    // Cut on a character boundary: decoding a cut multi-byte sequence would add U+FFFD.
    let cut = Buffer.from(text).subarray(0, left).toString('utf8');
    if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
    return cut;
  }

  #drop(): undefined {
    this.truncated = true;
    return undefined;
  }
}
