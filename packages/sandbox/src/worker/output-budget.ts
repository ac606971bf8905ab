import { serialize } from 'node:v8';

/**
 * Byte budgets for one execution's outputs and logs. An output that does not fit is dropped whole
 * (sizes are V8 serialized sizes, what crosses the IPC channel); a log line is cut at the budget.
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

  /** Whether `value` still fits; counts it when it does. */
  takeOutput(value: unknown): boolean {
    if (this.#outputBytes >= this.#maxOutputBytes) return this.#drop();
    let size: number;
    try {
      size = serialize(value).byteLength;
    } catch {
      return this.#drop();
    }
    if (this.#outputBytes + size > this.#maxOutputBytes) {
      this.#outputBytes = this.#maxOutputBytes;
      return this.#drop();
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

  #drop(): false {
    this.truncated = true;
    return false;
  }
}
