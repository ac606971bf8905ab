const LF = 10;
const CR = 13;

/** Receives the complete lines of a stream. */
export interface LineSink {
  /** A complete line, without its line ending (`'\n'`, `'\r\n'` or `'\r'`). */
  line(text: string, ending: string): void;
  /** The last line's `'\r'` ending turned out to be `'\r\n'` (the `'\n'` came in the next chunk). */
  widenLastEnding(): void;
}

/**
 * Cuts a stream of chunks into lines, whatever the chunk boundaries: a line is delivered as soon as
 * its line ending arrives (`\r` counts at once; a `\n` right after it joins it). A byte order mark at
 * the start of the stream is dropped, as remark-parse does. Each character is scanned once.
 *
 * @see https://spec.commonmark.org/0.31.2/#line-ending
 */
export class LineSplitter {
  readonly #sink: LineSink;
  #pending = '';
  #afterCr = false;
  #started = false;
  /** Whether the last delivered line had a line ending and nothing followed it yet. */
  #atLineStart = true;

  constructor(sink: LineSink) {
    this.#sink = sink;
  }

  push(chunk: string): void {
    if (chunk.length === 0) return;
    let start = 0;
    if (!this.#started) {
      this.#started = true;
      if (chunk.charCodeAt(0) === 0xfeff) start = 1;
    }
    if (this.#afterCr && chunk.charCodeAt(start) === LF) {
      this.#sink.widenLastEnding();
      start++;
    }
    this.#afterCr = false;
    let lineStart = start;
    for (let i = start; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code !== LF && code !== CR) continue;
      const text = this.#pending + chunk.slice(lineStart, i);
      this.#pending = '';
      let ending = code === LF ? '\n' : '\r';
      if (code === CR) {
        if (i + 1 < chunk.length) {
          if (chunk.charCodeAt(i + 1) === LF) {
            ending = '\r\n';
            i++;
          }
        } else {
          this.#afterCr = true;
        }
      }
      lineStart = i + 1;
      this.#sink.line(text, ending);
    }
    if (lineStart < chunk.length) {
      this.#pending += chunk.slice(lineStart);
      this.#atLineStart = false;
    } else {
      this.#atLineStart = true;
    }
  }

  /** Delivers the unterminated last line, if any; returns whether the stream ended with a line ending. */
  end(): boolean {
    if (!this.#atLineStart || this.#pending !== '') {
      this.#sink.line(this.#pending, '');
      this.#pending = '';
      return false;
    }
    return this.#started;
  }
}
