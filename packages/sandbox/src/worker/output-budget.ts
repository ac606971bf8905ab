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
   * Counts `value` when it still fits and returns its V8 serialization (`node:v8` `serialize`), the
   * bytes that were measured, so a large value need not be serialized again to be sent; `undefined`
   * when it is dropped.
   */
  takeOutput(value: unknown): Buffer | undefined {
    if (this.#outputBytes >= this.#maxOutputBytes) return this.#drop();
    let bytes: Buffer;
    try {
      bytes = serialize(value);
    } catch {
      return this.#drop();
    }
    return this.#take(bytes.byteLength) ? bytes : undefined;
  }

  /** Counts an output of `size` bytes if it fits; else drops it and spends the budget. */
  #take(size: number): boolean {
    if (this.#outputBytes + size > this.#maxOutputBytes) {
      this.#outputBytes = this.#maxOutputBytes;
      this.#drop();
      return false;
    }
    this.#outputBytes += size;
    return true;
  }

  /** Whether an output sent as JSON text still fits (counted as its UTF-8 bytes); counts it if so. */
  takeOutputJson(json: string): boolean {
    return this.#take(
      this.#outputBytes >= this.#maxOutputBytes ? Number.POSITIVE_INFINITY : Buffer.byteLength(json),
    );
  }

  /**
   * The event for an output the isolate sent (`json`: as JSON text, checked to be a string), counted
   * against the budget; `undefined` when it is dropped. A large structured value goes as the bytes
   * measured for the budget (see {@link SERIALIZED_OUTPUT_BYTES}).
   */
  outputEvent(value: unknown, json: boolean): WorkerEvent | undefined {
    if (json) {
      return typeof value === 'string' && this.takeOutputJson(value)
        ? { type: 'output', json: value }
        : undefined;
    }
    const bytes = this.takeOutput(value);
    if (!bytes) return undefined;
    return bytes.byteLength >= SERIALIZED_OUTPUT_BYTES
      ? { type: 'output', serialized: bytes }
      : { type: 'output', value };
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
