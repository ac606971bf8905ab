const LF = 10;
const CR = 13;
/** Up to this length a loop over characters beats two native searches. */
const SHORT_CHUNK = 32;

function hasLineEnding(chunk: string, from: number): boolean {
  for (let i = from; i < chunk.length; i++) {
    const code = chunk.charCodeAt(i);
    if (code === LF || code === CR) return true;
  }
  return false;
}

/**
 * The text of the current line so far, in a holder made new for each line. A long stream's splitter is
 * promoted to V8's old space, and storing a freshly built string into an old object runs the
 * generational write barrier's slow path on every 4-character chunk; storing it into a young holder
 * does not (about a tenth more time per MB on long streams otherwise).
 */
class PendingLine {
  text = '';
}

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
 * the start of the stream is dropped, as remark-parse does. Each character is scanned once (by
 * native `indexOf`).
 *
 * @see https://spec.commonmark.org/0.31.2/#line-ending
 */
export class LineSplitter {
  readonly #sink: LineSink;
  #pending = new PendingLine();
  #afterCr = false;
  #started = false;
  /** Whether the last delivered line had a line ending and nothing followed it yet. */
  #atLineStart = true;

  readonly #maxLineLength: number;

  /** @param maxLineLength most characters of an unfinished line kept; the rest of it is dropped. */
  constructor(sink: LineSink, maxLineLength = Number.POSITIVE_INFINITY) {
    this.#sink = sink;
    this.#maxLineLength = maxLineLength;
  }

  /** Characters of the unfinished line held. */
  get pendingLength(): number {
    return this.#pending.text.length;
  }

  #hold(text: string): void {
    const room = this.#maxLineLength - this.#pending.text.length;
    if (room <= 0) return;
    this.#pending.text += text.length > room ? text.slice(0, room) : text;
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
    if (chunk.length - start <= SHORT_CHUNK && !hasLineEnding(chunk, start)) {
      // The common case of token-sized chunks: no line ends here.
      this.#hold(start === 0 ? chunk : chunk.slice(start));
      this.#atLineStart = false;
      return;
    }
    let lineStart = start;
    // Native searches for both line-ending characters; far faster than a loop over characters.
    let lf = chunk.indexOf('\n', start);
    let cr = chunk.indexOf('\r', start);
    while (lf !== -1 || cr !== -1) {
      const isCr = cr !== -1 && (lf === -1 || cr < lf);
      const at = isCr ? cr : lf;
      const pending = this.#pending.text;
      const text = pending === '' ? chunk.slice(lineStart, at) : pending + chunk.slice(lineStart, at);
      if (pending !== '') this.#pending = new PendingLine();
      let ending = '\n';
      lineStart = at + 1;
      if (isCr) {
        ending = '\r';
        if (lf === at + 1) {
          ending = '\r\n';
          lineStart++;
        } else if (at + 1 === chunk.length) {
          this.#afterCr = true;
        }
      }
      this.#sink.line(text, ending);
      if (lf !== -1 && lf < lineStart) lf = chunk.indexOf('\n', lineStart);
      if (cr !== -1 && cr < lineStart) cr = chunk.indexOf('\r', lineStart);
    }
    if (lineStart < chunk.length) {
      this.#hold(chunk.slice(lineStart));
      this.#atLineStart = false;
    } else {
      this.#atLineStart = true;
    }
  }

  /** Delivers the unterminated last line, if any; returns whether the stream ended with a line ending. */
  end(): boolean {
    if (!this.#atLineStart || this.#pending.text !== '') {
      this.#sink.line(this.#pending.text, '');
      this.#pending = new PendingLine();
      return false;
    }
    return this.#started;
  }
}
